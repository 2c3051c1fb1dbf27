// aten::argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out)
//
// dim None: the index into the flattened tensor. The first minimum wins; NaN counts
// as the minimum (PyTorch's rule). out is Long.
#include "kernels/portable/util/extremum.h"

namespace kiln {
namespace portable {

void argmin_out(KernelContext& ctx, Span<EValue*> args) {
  arg_extreme_kernel</*kMax=*/false>(ctx, "aten::argmin.out", args);
}

}  // namespace portable
}  // namespace kiln
