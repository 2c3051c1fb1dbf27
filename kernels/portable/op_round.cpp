// aten::round.out(Tensor self, *, Tensor(a!) out)
//
// Floating point values round half to even (nearbyint in the default rounding mode), as
// in PyTorch; integer tensors are copied unchanged.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void round_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kRealTypes>(ctx, "aten::round.out", args, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::nearbyint(x);
    } else {
      return x;
    }
  });
}

}  // namespace portable
}  // namespace kiln
