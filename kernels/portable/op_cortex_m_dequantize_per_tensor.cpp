// cortex_m::dequantize_per_tensor.out(Tensor input, float scale, int zero_point,
//     int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
//
// ExecuTorch's Arm flow writes this op (instead of quantized_decomposed's) for the
// dequantize after an Ethos-U delegate. Same semantics, but without out_dtype: out is
// Float. It runs the quantized_decomposed kernel with out_dtype None.
#include "kernels/portable/util/quantize.h"

namespace kiln {
namespace portable {

void dequantize_per_tensor_out(KernelContext& ctx, Span<EValue*> args);

void cortex_m_dequantize_per_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::dequantize_per_tensor.out";
  // [input, scale, zero_point, quant_min, quant_max, dtype, out, out]
  KILN_KERNEL_CHECK(ctx, args.size() == 8, Error::InvalidArgument, kName,
                    "expected 8 arguments, got %zu", args.size());
  EValue none;
  EValue* full[9] = {args[0], args[1], args[2], args[3], args[4], args[5], &none, args[6], args[7]};
  dequantize_per_tensor_out(ctx, {full, 9});
}

}  // namespace portable
}  // namespace kiln
