// aten::amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out)
//
// dim [] reduces everything. NaN propagates, as in PyTorch.
#include "kernels/portable/util/extremum.h"

namespace kiln {
namespace portable {

void amax_out(KernelContext& ctx, Span<EValue*> args) {
  reduce_extreme_kernel</*kMax=*/true>(ctx, "aten::amax.out", args);
}

}  // namespace portable
}  // namespace kiln
