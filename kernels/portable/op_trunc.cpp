// aten::trunc.out(Tensor self, *, Tensor(a!) out)
//
// Floating point values round toward zero; integer tensors are copied unchanged (PyTorch's rule).
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void trunc_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kRealTypes>(ctx, "aten::trunc.out", args, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::trunc(x);
    } else {
      return x;
    }
  });
}

}  // namespace portable
}  // namespace kiln
