// aten::amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out)
//
// dim [] reduces everything. NaN propagates, as in PyTorch.
#include "kernels/portable/util/extremum.h"

namespace kiln {
namespace portable {

void amin_out(KernelContext& ctx, Span<EValue*> args) {
  reduce_extreme_kernel</*kMax=*/false>(ctx, "aten::amin.out", args);
}

}  // namespace portable
}  // namespace kiln
