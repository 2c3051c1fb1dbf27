// aten::ceil.out(Tensor self, *, Tensor(a!) out)
//
// Floating point values round up; integer tensors are copied unchanged (PyTorch's rule).
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void ceil_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kRealTypes>(ctx, "aten::ceil.out", args, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::ceil(x);
    } else {
      return x;
    }
  });
}

}  // namespace portable
}  // namespace kiln
