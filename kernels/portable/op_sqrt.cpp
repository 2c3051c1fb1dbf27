// aten::sqrt.out(Tensor self, *, Tensor(a!) out)
// Integer inputs give a floating-point out (PyTorch promotes them).
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void sqrt_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::sqrt.out", args, [](auto x) {
    return std::sqrt(x);
  });
}

}  // namespace portable
}  // namespace kiln
