// dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False,
//     int[]? dim_order=None, Tensor(a!) out)
//
// ExecuTorch's form of .to() / .contiguous(): converts the dtype and the dim order
// (e.g. channels-last [0, 2, 3, 1] to contiguous) into out.
#include "kernels/portable/util/dim_order_copy.h"

namespace kiln {
namespace portable {

void to_dim_order_copy_out(KernelContext& ctx, Span<EValue*> args) {
  dim_order_copy(ctx, args, "dim_order_ops::_to_dim_order_copy.out", /*allow_dtype_change=*/true);
}

}  // namespace portable
}  // namespace kiln
