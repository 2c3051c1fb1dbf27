// aten::expm1.out(Tensor self, *, Tensor(a!) out)
// Integer and bool inputs give a floating-point out (PyTorch promotes them).
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void expm1_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::expm1.out", args, [](auto x) { return std::expm1(x); });
}

}  // namespace portable
}  // namespace kiln
