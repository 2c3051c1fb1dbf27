// aten::bitwise_not.out(Tensor self, *, Tensor(a!) out)
//
// ~x for integers, !x for bool.
#include <type_traits>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void bitwise_not_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kIntTypes | kBoolType>(ctx, "aten::bitwise_not.out", args, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>) {
      return !x;
    } else {
      return static_cast<T>(~x);
    }
  });
}

}  // namespace portable
}  // namespace kiln
