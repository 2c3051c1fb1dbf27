// aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max,
//     Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)
// aten::max.unary_out(Tensor self, *, Tensor(a!) out)
//
// dim_max: the maximum along dim and its first position (Long); unary_out: the
// maximum of every element, 0-dim. NaN counts as the maximum, as in PyTorch.
#include "kernels/portable/util/extremum.h"

namespace kiln {
namespace portable {

void max_dim_max(KernelContext& ctx, Span<EValue*> args) {
  values_and_indices_kernel</*kMax=*/true>(ctx, "aten::max.dim_max", args);
}

void max_unary_out(KernelContext& ctx, Span<EValue*> args) {
  reduce_extreme_all_kernel</*kMax=*/true>(ctx, "aten::max.unary_out", args);
}

}  // namespace portable
}  // namespace kiln
