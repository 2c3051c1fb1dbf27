// aten::_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out)
#include "kernels/portable/util/softmax.h"

namespace kiln {
namespace portable {

void softmax_out(KernelContext& ctx, Span<EValue*> args) {
  softmax_kernel(ctx, "aten::_softmax.out", args, /*log=*/false);
}

}  // namespace portable
}  // namespace kiln
