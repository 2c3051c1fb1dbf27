// cortex_m::quantize_per_tensor.out(Tensor input, float scale, int zero_point,
//     int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
//
// ExecuTorch's Cortex-M passes use this op for every quantize left on the CPU, also in
// its Ethos-U programs. Same arithmetic as quantized_decomposed's (round half to even,
// NaN to the zero point); the tensors may have any layout, the same for input and out.
#include "kernels/cortex_m/util/args.h"
#include "kernels/portable/util/quantize.h"

namespace kiln {
namespace cortex_m {

void quantize_per_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::quantize_per_tensor.out";
  ArgReader r(ctx, kName, args, 8);
  Tensor* in = r.tensor_any_layout(0);
  const double scale = r.double_value(1);
  const int64_t zero_point = r.int_value(2);
  const int64_t qmin = r.int_value(3);
  const int64_t qmax = r.int_value(4);
  const int64_t dtype = r.int_value(5);
  Tensor* out = r.tensor_any_layout(6);
  if (!r.ok()) return;
  if (!portable::check_dtype(ctx, kName, *in, ScalarType::Float, "input") ||
      !portable::check_quant_params(ctx, kName, *out, dtype, qmin, qmax) ||
      !portable::resize_output_like(ctx, kName, *out, *in) ||
      !check_same_layout(ctx, kName, *in, *out, "input", "out") ||
      !portable::check_scale<float>(ctx, kName, scale, "scale", 0)) {
    return;
  }
  portable::quantize_floats_per_tensor(*in, *out, scale, zero_point, qmin, qmax);
}

}  // namespace cortex_m
}  // namespace kiln
