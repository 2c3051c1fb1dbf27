// aten::sigmoid.out(Tensor self, *, Tensor(a!) out)
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void sigmoid_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::sigmoid.out", args, [](auto x) {
    using T = decltype(x);
    return static_cast<T>(1) / (static_cast<T>(1) + std::exp(-x));
  });
}

}  // namespace portable
}  // namespace kiln
