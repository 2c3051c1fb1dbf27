// aten::rsqrt.out(Tensor self, *, Tensor(a!) out)
// Integer inputs give a floating-point out (PyTorch promotes them).
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void rsqrt_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::rsqrt.out", args, [](auto x) {
    using T = decltype(x);
    return static_cast<T>(1) / std::sqrt(x);
  });
}

}  // namespace portable
}  // namespace kiln
