// aten::log1p.out(Tensor self, *, Tensor(a!) out)
// Integer and bool inputs give a floating-point out (PyTorch promotes them).
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void log1p_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::log1p.out", args, [](auto x) { return std::log1p(x); });
}

}  // namespace portable
}  // namespace kiln
