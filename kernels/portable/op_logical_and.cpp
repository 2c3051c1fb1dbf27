// aten::logical_and.out(Tensor self, Tensor other, *, Tensor(a!) out)
//
// Elements of any dtype count as true when non-zero (NaN too); broadcasting; out is
// usually bool, other dtypes get 0 or 1.
#include "kernels/portable/util/predicate.h"

namespace kiln {
namespace portable {

void logical_and_out(KernelContext& ctx, Span<EValue*> args) {
  logical_binary_kernel(ctx, "aten::logical_and.out", args, [](bool a, bool b) { return a && b; });
}

}  // namespace portable
}  // namespace kiln
