// aten::fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::fmod.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
//
// The remainder of division rounded toward zero, with the sign of self (C's fmod).
// Floats follow IEEE (fmod by 0 is NaN); integer division by zero fails the kernel, as
// PyTorch raises ZeroDivisionError.
#include "kernels/portable/util/division.h"

namespace kiln {
namespace portable {

void fmod_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  division_tensor_kernel(ctx, "aten::fmod.Tensor_out", args,
                         [](auto x, auto y, bool& by_zero) { return remainder_trunc(x, y, by_zero); });
}

void fmod_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  division_scalar_kernel(ctx, "aten::fmod.Scalar_out", args,
                         [](auto x, auto y, bool& by_zero) { return remainder_trunc(x, y, by_zero); });
}

}  // namespace portable
}  // namespace kiln
