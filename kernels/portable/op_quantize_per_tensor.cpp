// quantized_decomposed::quantize_per_tensor.out(Tensor input, float scale, int zero_point,
//     int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
#include "kernels/portable/util/quantize.h"

namespace kiln {
namespace portable {

void quantize_per_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "quantized_decomposed::quantize_per_tensor.out";
  ArgReader r(ctx, kName, args, 8);
  Tensor* in = r.tensor(0);
  const double scale = r.double_value(1);
  const int64_t zero_point = r.int_value(2);
  const int64_t qmin = r.int_value(3);
  const int64_t qmax = r.int_value(4);
  const int64_t dtype = r.int_value(5);
  Tensor* out = r.tensor(6);
  if (!r.ok()) return;
  if (!check_dtype(ctx, kName, *in, ScalarType::Float, "input") ||
      !check_quant_params(ctx, kName, *out, dtype, qmin, qmax) ||
      !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  if (!check_scale<float>(ctx, kName, scale, "scale", 0)) return;
  quantize_floats_per_tensor(*in, *out, scale, zero_point, qmin, qmax);
}

}  // namespace portable
}  // namespace kiln
