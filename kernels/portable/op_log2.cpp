// aten::log2.out(Tensor self, *, Tensor(a!) out)
// Integer and bool inputs give a floating-point out (PyTorch promotes them).
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void log2_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::log2.out", args, [](auto x) { return std::log2(x); });
}

}  // namespace portable
}  // namespace kiln
