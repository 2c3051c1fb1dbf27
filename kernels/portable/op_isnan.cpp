// aten::isnan.out(Tensor self, *, Tensor(a!) out)
//
// Integer and bool tensors have no NaN: all false.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/predicate.h"

namespace kiln {
namespace portable {

void isnan_out(KernelContext& ctx, Span<EValue*> args) {
  unary_predicate_kernel(ctx, "aten::isnan.out", args, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::isnan(x);
    } else {
      return false;
    }
  });
}

}  // namespace portable
}  // namespace kiln
