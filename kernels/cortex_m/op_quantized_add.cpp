// cortex_m::quantized_add.out(Tensor self, int self_zero_point, int self_multiplier,
//     int self_shift, Tensor other, int other_zero_point, int other_multiplier,
//     int other_shift, int output_zero_point, int output_multiplier, int output_shift,
//     int activation_min, int activation_max, *, Tensor(a!) out)
//
// CMSIS-NN's int8 add: each input, minus its zero point and shifted left by 20 bits, is
// requantized to a common scale; the sum is requantized to the output scale, offset by
// the output zero point and clamped. `other` (or `self`) may hold one value per channel.
// An operand's multiplier may be negative: ExecuTorch lowers a - b as an add whose
// second operand's multiplier is negated.
#include "kernels/cortex_m/util/args.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {

void quantized_add_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::quantized_add.out";
  constexpr int32_t kLeftShift = 20;
  ArgReader r(ctx, kName, args, 15);
  Tensor* a = r.tensor_any_layout(0);
  int64_t p[12];
  for (size_t i = 1; i <= 3; ++i) p[i] = r.int_value(i);
  Tensor* b = r.tensor_any_layout(4);
  for (size_t i = 5; i <= 12; ++i) p[i - 1] = r.int_value(i);
  Tensor* out = r.tensor_any_layout(13);
  if (!r.ok()) return;
  // p: 1 self zp, 2 self mult, 3 self shift, 4 other zp, 5 other mult, 6 other shift,
  //    7 out zp, 8 out mult, 9 out shift, 10 act min, 11 act max
  Pairing pair;
  if (!check_int8(ctx, kName, *a, "self") || !check_int8(ctx, kName, *b, "other") ||
      !check_int8(ctx, kName, *out, "out") || !check_range(ctx, kName, p[1], -128, 127, "self_zero_point") ||
      !check_range(ctx, kName, p[4], -128, 127, "other_zero_point") ||
      !check_range(ctx, kName, p[7], -128, 127, "output_zero_point") ||
      !check_signed_requantize_params(ctx, kName, p[2], p[3], "self") ||
      !check_signed_requantize_params(ctx, kName, p[5], p[6], "other") ||
      !check_requantize_params(ctx, kName, p[8], p[9], "output") || !check_activation(ctx, kName, p[10], p[11]) ||
      !pair_operands(ctx, kName, *a, *b, &pair) || !portable::resize_output_like(ctx, kName, *out, *pair.big) ||
      !check_same_layout(ctx, kName, *pair.big, *out, "the larger operand", "out")) {
    return;
  }
  const int8_t* big = pair.big->const_data_ptr<int8_t>();
  const int8_t* small = pair.small->const_data_ptr<int8_t>();
  // Parameters of the big / small operand.
  const int64_t* pb = pair.swapped ? p + 4 : p + 1;
  const int64_t* ps = pair.swapped ? p + 1 : p + 4;
  const int32_t big_zp = static_cast<int32_t>(pb[0]), big_mult = static_cast<int32_t>(pb[1]),
                big_shift = static_cast<int32_t>(pb[2]);
  const int32_t small_zp = static_cast<int32_t>(ps[0]), small_mult = static_cast<int32_t>(ps[1]),
                small_shift = static_cast<int32_t>(ps[2]);
  const int32_t out_zp = static_cast<int32_t>(p[7]), out_mult = static_cast<int32_t>(p[8]),
                out_shift = static_cast<int32_t>(p[9]);
  const int32_t lo = static_cast<int32_t>(p[10]), hi = static_cast<int32_t>(p[11]);
  int8_t* y = out->mutable_data_ptr<int8_t>();
  const size_t n = out->numel();
  const size_t period = pair.period;
  for (size_t i = 0, j = 0; i < n; ++i) {
    const int32_t x1 = requantize((big[i] - big_zp) * (1 << kLeftShift), big_mult, big_shift);
    const int32_t x2 = requantize((small[j] - small_zp) * (1 << kLeftShift), small_mult, small_shift);
    if (++j == period) j = 0;
    y[i] = static_cast<int8_t>(clamp(requantize(x1 + x2, out_mult, out_shift) + out_zp, lo, hi));
  }
}

}  // namespace cortex_m
}  // namespace kiln
