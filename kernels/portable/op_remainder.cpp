// aten::remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::remainder.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
//
// The remainder of division rounded toward -inf, with the sign of other (Python's %).
// Floats follow IEEE (remainder by 0 is NaN); integer division by zero fails the kernel,
// as PyTorch raises ZeroDivisionError.
#include "kernels/portable/util/division.h"

namespace kiln {
namespace portable {

void remainder_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  division_tensor_kernel(ctx, "aten::remainder.Tensor_out", args,
                         [](auto x, auto y, bool& by_zero) { return remainder_floor(x, y, by_zero); });
}

void remainder_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  division_scalar_kernel(ctx, "aten::remainder.Scalar_out", args,
                         [](auto x, auto y, bool& by_zero) { return remainder_floor(x, y, by_zero); });
}

}  // namespace portable
}  // namespace kiln
