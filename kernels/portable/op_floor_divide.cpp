// aten::floor_divide.out(Tensor self, Tensor other, *, Tensor(a!) out)
//
// self / other rounded toward -inf (Python's //), broadcast; integer division by zero
// fails the kernel, as PyTorch raises ZeroDivisionError.
#include "kernels/portable/util/division.h"

namespace kiln {
namespace portable {

void floor_divide_out(KernelContext& ctx, Span<EValue*> args) {
  division_tensor_kernel(ctx, "aten::floor_divide.out", args,
                         [](auto x, auto y, bool& by_zero) { return divide_floor(x, y, by_zero); });
}

}  // namespace portable
}  // namespace kiln
