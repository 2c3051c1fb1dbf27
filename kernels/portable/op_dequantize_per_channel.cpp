// quantized_decomposed::dequantize_per_channel.out(Tensor input, Tensor scales,
//     Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *,
//     ScalarType? out_dtype=None, Tensor(a!) out)
//
// x = (q - zero_point[c]) * scale[c], computed in the scales' dtype, then stored in out's
// dtype (Float unless out_dtype says otherwise).
#include "kernels/portable/util/quantize.h"

namespace kiln {
namespace portable {

namespace {

template <typename F, typename Q, typename T>
void dequantize_channels(const Q* q, const Tensor& scales, const Tensor* zero_points,
                         const ChannelLayout& l, size_t n, T* x) {
  const F* s = scales.const_data_ptr<F>();
  for (size_t i = 0; i < n;) {
    const size_t c = (i / l.inner) % l.channels;
    const int64_t zp = channel_zero_point(zero_points, c);
    const size_t end = i + l.inner;  // the run of elements sharing channel c
    for (; i < end; ++i) x[i] = static_cast<T>(static_cast<F>(static_cast<int64_t>(q[i]) - zp) * s[c]);
  }
}

}  // namespace

void dequantize_per_channel_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "quantized_decomposed::dequantize_per_channel.out";
  ArgReader r(ctx, kName, args, 10);
  Tensor* in = r.tensor(0);
  Tensor* scales = r.tensor(1);
  Tensor* zero_points = r.optional_tensor(2);
  const int64_t axis = r.int_value(3);
  const int64_t qmin = r.int_value(4);
  const int64_t qmax = r.int_value(5);
  const int64_t dtype = r.int_value(6);
  const int64_t out_dtype = r.optional_int(7, static_cast<int64_t>(ScalarType::Float));
  Tensor* out = r.tensor(8);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, static_cast<int64_t>(out->scalar_type()) == out_dtype, Error::InvalidType,
                    kName, "out is %s but out_dtype is %lld", scalar_type_name(out->scalar_type()),
                    static_cast<long long>(out_dtype));
  ChannelLayout layout;
  if (!check_quant_params(ctx, kName, *in, dtype, qmin, qmax) ||
      !check_channel_params(ctx, kName, *in, *scales, zero_points, axis, &layout) ||
      !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  if (in->numel() == 0) return;
  visit_quantized(in->scalar_type(), [&](auto tag) {
    using Q = decltype(tag);
    const Q* q = in->const_data_ptr<Q>();
    dispatch_dtype<kFloatTypes>(ctx, kName, out->scalar_type(), [&](auto out_tag) {
      using T = decltype(out_tag);
      if (scales->scalar_type() == ScalarType::Double) {
        dequantize_channels<double>(q, *scales, zero_points, layout, in->numel(), out->mutable_data_ptr<T>());
      } else {
        dequantize_channels<float>(q, *scales, zero_points, layout, in->numel(), out->mutable_data_ptr<T>());
      }
    });
  });
}

}  // namespace portable
}  // namespace kiln
