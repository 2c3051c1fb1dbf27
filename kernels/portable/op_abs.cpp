// aten::abs.out(Tensor self, *, Tensor(a!) out)
#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

void abs_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kRealTypes>(ctx, "aten::abs.out", args, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else {
      return x < static_cast<T>(0) ? wrap_sub(static_cast<T>(0), x) : x;
    }
  });
}

}  // namespace portable
}  // namespace kiln
