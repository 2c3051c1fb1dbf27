// aten::_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out)
#include "kernels/portable/util/softmax.h"

namespace kiln {
namespace portable {

void log_softmax_out(KernelContext& ctx, Span<EValue*> args) {
  softmax_kernel(ctx, "aten::_log_softmax.out", args, /*log=*/true);
}

}  // namespace portable
}  // namespace kiln
