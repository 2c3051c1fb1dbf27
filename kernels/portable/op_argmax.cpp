// aten::argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out)
//
// dim None: the index into the flattened tensor. The first maximum wins; NaN counts
// as the maximum (PyTorch's rule). out is Long.
#include "kernels/portable/util/extremum.h"

namespace kiln {
namespace portable {

void argmax_out(KernelContext& ctx, Span<EValue*> args) {
  arg_extreme_kernel</*kMax=*/true>(ctx, "aten::argmax.out", args);
}

}  // namespace portable
}  // namespace kiln
