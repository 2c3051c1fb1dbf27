// cortex_m::dequantize_per_tensor.out(Tensor input, float scale, int zero_point,
//     int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
//
// quantized_decomposed's dequantize without out_dtype: out is Float,
// x = (q - zero_point) * scale in float32. Any layout, the same for input and out.
#include "kernels/cortex_m/util/args.h"
#include "kernels/portable/util/quantize.h"

namespace kiln {
namespace cortex_m {

void dequantize_per_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::dequantize_per_tensor.out";
  ArgReader r(ctx, kName, args, 8);
  Tensor* in = r.tensor_any_layout(0);
  const double scale = r.double_value(1);
  const int64_t zero_point = r.int_value(2);
  const int64_t qmin = r.int_value(3);
  const int64_t qmax = r.int_value(4);
  const int64_t dtype = r.int_value(5);
  Tensor* out = r.tensor_any_layout(6);
  if (!r.ok()) return;
  if (!portable::check_dtype(ctx, kName, *out, ScalarType::Float, "out") ||
      !portable::check_quant_params(ctx, kName, *in, dtype, qmin, qmax) ||
      !portable::resize_output_like(ctx, kName, *out, *in) ||
      !check_same_layout(ctx, kName, *in, *out, "input", "out")) {
    return;
  }
  const float s = static_cast<float>(scale);
  const float zp = static_cast<float>(zero_point);
  float* x = out->mutable_data_ptr<float>();
  const size_t n = in->numel();
  portable::visit_quantized(in->scalar_type(), [&](auto tag) {
    using Q = decltype(tag);
    const Q* q = in->const_data_ptr<Q>();
    for (size_t i = 0; i < n; ++i) x[i] = (static_cast<float>(q[i]) - zp) * s;
  });
}

}  // namespace cortex_m
}  // namespace kiln
