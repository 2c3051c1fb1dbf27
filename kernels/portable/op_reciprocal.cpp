// aten::reciprocal.out(Tensor self, *, Tensor(a!) out)
// Integer and bool inputs give a floating-point out (PyTorch promotes them); 1 / 0 is inf.
#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void reciprocal_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::reciprocal.out", args, [](auto x) {
    using T = decltype(x);
    return static_cast<T>(1) / x;
  });
}

}  // namespace portable
}  // namespace kiln
