// aten::exp.out(Tensor self, *, Tensor(a!) out)
// Integer inputs give a floating-point out (PyTorch promotes them).
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void exp_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::exp.out", args, [](auto x) {
    return std::exp(x);
  });
}

}  // namespace portable
}  // namespace kiln
