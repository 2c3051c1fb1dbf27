// aten::neg.out(Tensor self, *, Tensor(a!) out)
// Unsigned integers wrap around, as in PyTorch.
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

void neg_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kRealTypes>(ctx, "aten::neg.out", args, [](auto x) {
    using T = decltype(x);
    return wrap_sub(static_cast<T>(0), x);
  });
}

}  // namespace portable
}  // namespace kiln
