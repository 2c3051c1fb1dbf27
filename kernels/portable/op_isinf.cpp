// aten::isinf.out(Tensor self, *, Tensor(a!) out)
//
// True at +inf and -inf; integer and bool tensors give all false.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/predicate.h"

namespace kiln {
namespace portable {

void isinf_out(KernelContext& ctx, Span<EValue*> args) {
  unary_predicate_kernel(ctx, "aten::isinf.out", args, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::isinf(x);
    } else {
      return false;
    }
  });
}

}  // namespace portable
}  // namespace kiln
