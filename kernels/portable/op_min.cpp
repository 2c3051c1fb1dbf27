// aten::min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min,
//     Tensor(b!) min_values) -> (Tensor(a!) values, Tensor(b!) indices)
// aten::min.unary_out(Tensor self, *, Tensor(a!) out)
//
// dim_min: the minimum along dim and its first position (Long); unary_out: the
// minimum of every element, 0-dim. NaN counts as the minimum, as in PyTorch.
#include "kernels/portable/util/extremum.h"

namespace kiln {
namespace portable {

void min_dim_min(KernelContext& ctx, Span<EValue*> args) {
  values_and_indices_kernel</*kMax=*/false>(ctx, "aten::min.dim_min", args);
}

void min_unary_out(KernelContext& ctx, Span<EValue*> args) {
  reduce_extreme_all_kernel</*kMax=*/false>(ctx, "aten::min.unary_out", args);
}

}  // namespace portable
}  // namespace kiln
