// dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False,
//     int[]? dim_order=None, Tensor(a!) out)
//
// ExecuTorch's form of clone (it emits one for MobileNetV2's dropout): same dtype,
// out in the requested dim order.
#include "kernels/portable/util/dim_order_copy.h"

namespace kiln {
namespace portable {

void clone_dim_order_out(KernelContext& ctx, Span<EValue*> args) {
  dim_order_copy(ctx, args, "dim_order_ops::_clone_dim_order.out", /*allow_dtype_change=*/false);
}

}  // namespace portable
}  // namespace kiln
