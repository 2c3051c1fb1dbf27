// aten::logical_not.out(Tensor self, *, Tensor(a!) out)
//
// True where self is zero; out is usually bool, other dtypes get 0 or 1.
#include "kernels/portable/util/predicate.h"

namespace kiln {
namespace portable {

void logical_not_out(KernelContext& ctx, Span<EValue*> args) {
  unary_predicate_kernel(ctx, "aten::logical_not.out", args, [](auto x) { return !static_cast<bool>(x); });
}

}  // namespace portable
}  // namespace kiln
