// quantized_decomposed::dequantize_per_tensor.out(Tensor input, float scale, int zero_point,
//     int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None,
//     Tensor(a!) out)
//
// out is Float unless out_dtype says otherwise (Double is supported too).
#include "kernels/portable/util/quantize.h"

namespace kiln {
namespace portable {

void dequantize_per_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "quantized_decomposed::dequantize_per_tensor.out";
  ArgReader r(ctx, kName, args, 9);
  Tensor* in = r.tensor(0);
  const double scale = r.double_value(1);
  const int64_t zero_point = r.int_value(2);
  const int64_t qmin = r.int_value(3);
  const int64_t qmax = r.int_value(4);
  const int64_t dtype = r.int_value(5);
  const int64_t out_dtype = r.optional_int(6, static_cast<int64_t>(ScalarType::Float));
  Tensor* out = r.tensor(7);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, static_cast<int64_t>(out->scalar_type()) == out_dtype, Error::InvalidType,
                    kName, "out is %s but out_dtype is %lld", scalar_type_name(out->scalar_type()),
                    static_cast<long long>(out_dtype));
  if (!check_quant_params(ctx, kName, *in, dtype, qmin, qmax) ||
      !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  const size_t n = in->numel();
  visit_quantized(in->scalar_type(), [&](auto tag) {
    using Q = decltype(tag);
    const Q* q = in->const_data_ptr<Q>();
    dispatch_dtype<kFloatTypes>(ctx, kName, out->scalar_type(), [&](auto out_tag) {
      using T = decltype(out_tag);
      T* x = out->mutable_data_ptr<T>();
      const T s = static_cast<T>(scale);
      const T zp = static_cast<T>(zero_point);
      for (size_t i = 0; i < n; ++i) x[i] = (static_cast<T>(q[i]) - zp) * s;
    });
  });
}

}  // namespace portable
}  // namespace kiln
