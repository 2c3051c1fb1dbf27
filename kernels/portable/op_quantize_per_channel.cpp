// quantized_decomposed::quantize_per_channel.out(Tensor input, Tensor scales,
//     Tensor zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *,
//     Tensor(a!) out)
//
// Computed in float32 for Float scales and in double for Double scales, as PyTorch's
// input * (1.0 / scales) promotes.
#include "kernels/portable/util/quantize.h"

namespace kiln {
namespace portable {

namespace {

template <typename F, typename Q>
void quantize_channels(const Tensor& in, const Tensor& scales, const Tensor& zero_points,
                       const ChannelLayout& l, int64_t qmin, int64_t qmax, Q* q) {
  const float* x = in.const_data_ptr<float>();
  const F* s = scales.const_data_ptr<F>();
  const size_t n = in.numel();
  for (size_t i = 0; i < n;) {
    const size_t c = (i / l.inner) % l.channels;
    const F inv_scale = static_cast<F>(1) / s[c];
    const F zp = static_cast<F>(channel_zero_point(&zero_points, c));
    const size_t end = i + l.inner;  // the run of elements sharing channel c
    for (; i < end; ++i) {
      q[i] = quantize_value<Q, F>(static_cast<F>(x[i]), inv_scale, zp, static_cast<F>(qmin), static_cast<F>(qmax));
    }
  }
}

}  // namespace

void quantize_per_channel_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "quantized_decomposed::quantize_per_channel.out";
  ArgReader r(ctx, kName, args, 9);
  Tensor* in = r.tensor(0);
  Tensor* scales = r.tensor(1);
  Tensor* zero_points = r.tensor(2);
  const int64_t axis = r.int_value(3);
  const int64_t qmin = r.int_value(4);
  const int64_t qmax = r.int_value(5);
  const int64_t dtype = r.int_value(6);
  Tensor* out = r.tensor(7);
  if (!r.ok()) return;
  ChannelLayout layout;
  if (!check_dtype(ctx, kName, *in, ScalarType::Float, "input") ||
      !check_quant_params(ctx, kName, *out, dtype, qmin, qmax) ||
      !check_channel_params(ctx, kName, *in, *scales, zero_points, axis, &layout) ||
      !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  if (in->numel() == 0) return;
  for (size_t c = 0; c < layout.channels; ++c) {
    const double scale = scales->scalar_type() == ScalarType::Double
                             ? scales->const_data_ptr<double>()[c]
                             : static_cast<double>(scales->const_data_ptr<float>()[c]);
    const bool ok = scales->scalar_type() == ScalarType::Double
                        ? check_scale<double>(ctx, kName, scale, "scales", c)
                        : check_scale<float>(ctx, kName, scale, "scales", c);
    if (!ok) return;
  }
  visit_quantized(out->scalar_type(), [&](auto tag) {
    using Q = decltype(tag);
    if (scales->scalar_type() == ScalarType::Double) {
      quantize_channels<double, Q>(*in, *scales, *zero_points, layout, qmin, qmax, out->mutable_data_ptr<Q>());
    } else {
      quantize_channels<float, Q>(*in, *scales, *zero_points, layout, qmin, qmax, out->mutable_data_ptr<Q>());
    }
  });
}

}  // namespace portable
}  // namespace kiln
