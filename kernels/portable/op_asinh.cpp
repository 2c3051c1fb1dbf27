// aten::asinh.out(Tensor self, *, Tensor(a!) out)
// Integer and bool inputs give a floating-point out (PyTorch promotes them).
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void asinh_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::asinh.out", args, [](auto x) { return std::asinh(x); });
}

}  // namespace portable
}  // namespace kiln
