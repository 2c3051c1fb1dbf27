// aten::relu.out(Tensor self, *, Tensor(a!) out)
#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void relu_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kRealTypes>(ctx, "aten::relu.out", args, [](auto x) {
    using T = decltype(x);
    // "x < 0" rather than "x > 0" so that NaN passes through as in PyTorch.
    return x < static_cast<T>(0) ? static_cast<T>(0) : x;
  });
}

}  // namespace portable
}  // namespace kiln
