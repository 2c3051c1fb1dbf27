// cortex_m::quantized_mul.out(Tensor self, int self_zero_point, Tensor other,
//     int other_zero_point, int output_zero_point, int output_multiplier, int output_shift,
//     *, Tensor(a!) out)
//
// CMSIS-NN's int8 multiply: (self - zp) * (other - zp), requantized to the output scale,
// plus the output zero point, saturated to int8. One operand may hold one value per channel.
#include "kernels/cortex_m/util/args.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {

void quantized_mul_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::quantized_mul.out";
  ArgReader r(ctx, kName, args, 9);
  Tensor* a = r.tensor_any_layout(0);
  const int64_t a_zp = r.int_value(1);
  Tensor* b = r.tensor_any_layout(2);
  const int64_t b_zp = r.int_value(3);
  const int64_t out_zp = r.int_value(4);
  const int64_t mult = r.int_value(5);
  const int64_t shift = r.int_value(6);
  Tensor* out = r.tensor_any_layout(7);
  if (!r.ok()) return;
  Pairing pair;
  if (!check_int8(ctx, kName, *a, "self") || !check_int8(ctx, kName, *b, "other") ||
      !check_int8(ctx, kName, *out, "out") || !check_range(ctx, kName, a_zp, -128, 127, "self_zero_point") ||
      !check_range(ctx, kName, b_zp, -128, 127, "other_zero_point") ||
      !check_range(ctx, kName, out_zp, -128, 127, "output_zero_point") ||
      !check_requantize_params(ctx, kName, mult, shift, "output") || !pair_operands(ctx, kName, *a, *b, &pair) ||
      !portable::resize_output_like(ctx, kName, *out, *pair.big) ||
      !check_same_layout(ctx, kName, *pair.big, *out, "the larger operand", "out")) {
    return;
  }
  const int8_t* big = pair.big->const_data_ptr<int8_t>();
  const int8_t* small = pair.small->const_data_ptr<int8_t>();
  const int32_t big_zp = static_cast<int32_t>(pair.swapped ? b_zp : a_zp);
  const int32_t small_zp = static_cast<int32_t>(pair.swapped ? a_zp : b_zp);
  int8_t* y = out->mutable_data_ptr<int8_t>();
  const size_t n = out->numel();
  for (size_t i = 0, j = 0; i < n; ++i) {
    const int32_t product = (big[i] - big_zp) * (small[j] - small_zp);
    if (++j == pair.period) j = 0;
    const int32_t v = requantize(product, static_cast<int32_t>(mult), static_cast<int32_t>(shift)) +
                      static_cast<int32_t>(out_zp);
    y[i] = static_cast<int8_t>(clamp(v, -128, 127));
  }
}

}  // namespace cortex_m
}  // namespace kiln
