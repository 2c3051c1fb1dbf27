// cortex_m::quantized_div.out(Tensor self, int self_zero_point, Tensor other,
//     int other_zero_point, int output_zero_point, float output_scale, *, Tensor(a!) out)
//
// CMSIS-NN has no integer division: the quotient of the zero-point-corrected operands is
// computed in float32, scaled by output_scale (scale_self / (scale_other * scale_out)),
// rounded half to even and offset by the output zero point, saturating to int8 or int16.
// A zero divisor gives a zero quotient. Operands have equal sizes.
#include <cmath>

#include "kernels/cortex_m/util/args.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {
namespace {

template <typename T>
void divide(const T* a, int32_t a_zp, const T* b, int32_t b_zp, int32_t out_zp, float scale, T* y, size_t n,
            int32_t lo, int32_t hi) {
  for (size_t i = 0; i < n; ++i) {
    const float num = static_cast<float>(static_cast<int32_t>(a[i]) - a_zp);
    const float den = static_cast<float>(static_cast<int32_t>(b[i]) - b_zp);
    const float quotient = den != 0.0f ? num / den : 0.0f;
    const float scaled = std::nearbyint(quotient * scale);  // ties to even, as torch.round
    const float bounded = scaled < -65536.0f ? -65536.0f : (scaled > 65536.0f ? 65536.0f : scaled);
    y[i] = static_cast<T>(clamp(static_cast<int32_t>(bounded) + out_zp, lo, hi));
  }
}

}  // namespace

void quantized_div_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::quantized_div.out";
  ArgReader r(ctx, kName, args, 8);
  Tensor* a = r.tensor_any_layout(0);
  const int64_t a_zp = r.int_value(1);
  Tensor* b = r.tensor_any_layout(2);
  const int64_t b_zp = r.int_value(3);
  const int64_t out_zp = r.int_value(4);
  const double scale = r.double_value(5);
  Tensor* out = r.tensor_any_layout(6);
  if (!r.ok()) return;
  const ScalarType t = a->scalar_type();
  if (t != ScalarType::Char && t != ScalarType::Short) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, kName, "self is %s, must be Char (int8) or Short (int16)",
                     scalar_type_name(t));
    return;
  }
  const int64_t lo = t == ScalarType::Char ? -128 : -32768;
  const int64_t hi = t == ScalarType::Char ? 127 : 32767;
  if (!portable::check_dtype(ctx, kName, *b, t, "other") || !portable::check_dtype(ctx, kName, *out, t, "out") ||
      !check_range(ctx, kName, a_zp, lo, hi, "self_zero_point") ||
      !check_range(ctx, kName, b_zp, lo, hi, "other_zero_point") ||
      !check_range(ctx, kName, out_zp, lo, hi, "output_zero_point") ||
      !check_same_layout(ctx, kName, *a, *b, "self", "other") ||
      !portable::resize_output_like(ctx, kName, *out, *a) ||
      !check_same_layout(ctx, kName, *a, *out, "self", "out")) {
    return;
  }
  if (a->numel() != b->numel() || !std::isfinite(scale)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "operands must have equal sizes (%zu vs %zu) and a finite scale (%g)",
                     a->numel(), b->numel(), scale);
    return;
  }
  const int32_t z1 = static_cast<int32_t>(a_zp), z2 = static_cast<int32_t>(b_zp), zo = static_cast<int32_t>(out_zp);
  if (t == ScalarType::Char) {
    divide(a->const_data_ptr<int8_t>(), z1, b->const_data_ptr<int8_t>(), z2, zo, static_cast<float>(scale),
           out->mutable_data_ptr<int8_t>(), out->numel(), -128, 127);
  } else {
    divide(a->const_data_ptr<int16_t>(), z1, b->const_data_ptr<int16_t>(), z2, zo, static_cast<float>(scale),
           out->mutable_data_ptr<int16_t>(), out->numel(), -32768, 32767);
  }
}

}  // namespace cortex_m
}  // namespace kiln
