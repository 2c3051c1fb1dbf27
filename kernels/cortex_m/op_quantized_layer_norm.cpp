// kiln::quantized_layer_norm.out(Tensor input, int input_zero_point, float input_scale,
//     Tensor? weight, Tensor? bias, float eps, int output_zero_point, float output_scale,
//     int activation_min, int activation_max, *, Tensor(a!) out)
//
// Layer normalization over the last dim of an int8 tensor: Kiln's own operator, since
// ExecuTorch's cortex_m:: set has none (transformer blocks would otherwise run it in float
// between a dequantize and a quantize). Each row's mean and variance come from integer
// sums of d = x - input_zero_point, exactly; the rest is float32 as PyTorch computes it on
// the dequantized values:
//   y = (d - mean(d)) * input_scale / sqrt(var(d) * input_scale^2 + eps) * weight + bias
// then quantized as quantize_per_tensor does (y * (1 / output_scale) rounded half to
// even, plus output_zero_point), clamped to [activation_min, activation_max]. It agrees
// with the quantized PyTorch model within one output step (float summation orders differ).
// weight and bias (float32, one value per element of the last dim) are optional.
#include <cmath>
#include <initializer_list>

#include "kernels/cortex_m/util/args.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {

void quantized_layer_norm_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "kiln::quantized_layer_norm.out";
  ArgReader r(ctx, kName, args, 12);
  Tensor* in = r.tensor(0);
  const int64_t in_zp = r.int_value(1);
  const double in_scale = r.double_value(2);
  Tensor* weight = r.optional_tensor(3);
  Tensor* bias = r.optional_tensor(4);
  const double eps = r.double_value(5);
  const int64_t out_zp = r.int_value(6);
  const double out_scale = r.double_value(7);
  const int64_t lo = r.int_value(8);
  const int64_t hi = r.int_value(9);
  Tensor* out = r.tensor(10);
  if (!r.ok()) return;
  if (!check_int8(ctx, kName, *in, "input") || !check_int8(ctx, kName, *out, "out") ||
      !check_range(ctx, kName, in_zp, -128, 127, "input_zero_point") ||
      !check_range(ctx, kName, out_zp, -128, 127, "output_zero_point") || !check_activation(ctx, kName, lo, hi)) {
    return;
  }
  if (in->dim() < 1 || in->size(-1) < 1 || !(in_scale > 0.0) || !(out_scale > 0.0) || !(eps >= 0.0) ||
      !std::isfinite(in_scale) || !std::isfinite(out_scale) || !std::isfinite(eps)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName,
                     "input %s needs a last dim, positive finite scales and eps >= 0 (scales %g, %g, eps %g)",
                     portable::ShapeString(*in).c_str(), in_scale, out_scale, eps);
    return;
  }
  const int32_t n = in->size(-1);
  for (Tensor* t : {weight, bias}) {
    if (t != nullptr && (!portable::check_dtype(ctx, kName, *t, ScalarType::Float, t == weight ? "weight" : "bias") ||
                         static_cast<int64_t>(t->numel()) != n)) {
      if (ctx.failure_state() == Error::Ok) {
        KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "%s has %zu elements, the last dim %d",
                         t == weight ? "weight" : "bias", t->numel(), static_cast<int>(n));
      }
      return;
    }
  }
  if (!portable::resize_output_like(ctx, kName, *out, *in)) return;
  const int8_t* x = in->const_data_ptr<int8_t>();
  const float* w = weight != nullptr ? weight->const_data_ptr<float>() : nullptr;
  const float* b = bias != nullptr ? bias->const_data_ptr<float>() : nullptr;
  int8_t* y = out->mutable_data_ptr<int8_t>();
  const int32_t zp = static_cast<int32_t>(in_zp);
  const float scale = static_cast<float>(in_scale);
  const float inv_out = 1.0f / static_cast<float>(out_scale);
  const size_t rows = in->numel() / static_cast<size_t>(n);
  for (size_t row = 0; row < rows; ++row, x += n, y += n) {
    int64_t s1 = 0, s2 = 0;
    for (int32_t i = 0; i < n; ++i) {
      const int64_t d = x[i] - zp;
      s1 += d;
      s2 += d * d;
    }
    // var(d) = (n * s2 - s1^2) / n^2, the numerator exact in 64 bits (|d| <= 255).
    const float mean = static_cast<float>(s1) / static_cast<float>(n);
    const float var = static_cast<float>(static_cast<double>(n * s2 - s1 * s1) / (static_cast<double>(n) * n));
    const float inv = 1.0f / std::sqrt(var * scale * scale + static_cast<float>(eps));
    for (int32_t i = 0; i < n; ++i) {
      float v = (static_cast<float>(x[i] - zp) - mean) * scale * inv;
      if (w != nullptr) v *= w[i];
      if (b != nullptr) v += b[i];
      const float q = std::nearbyint(v * inv_out);  // ties to even, as torch.round
      const float bounded = q < -65536.0f ? -65536.0f : (q > 65536.0f ? 65536.0f : q);
      y[i] = static_cast<int8_t>(clamp(static_cast<int32_t>(bounded) + static_cast<int32_t>(out_zp),
                                       static_cast<int32_t>(lo), static_cast<int32_t>(hi)));
    }
  }
}

}  // namespace cortex_m
}  // namespace kiln
