// aten::sign.out(Tensor self, *, Tensor(a!) out)
//
// -1, 0 or 1 in self's dtype; NaN gives 0 and bool is unchanged, as in PyTorch.
#include <type_traits>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void sign_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kAllTypes>(ctx, "aten::sign.out", args, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>) {
      return x;
    } else {
      return static_cast<T>(static_cast<int>(static_cast<T>(0) < x) - static_cast<int>(x < static_cast<T>(0)));
    }
  });
}

}  // namespace portable
}  // namespace kiln
