// aten::ge.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// aten::ge.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/predicate.h"

namespace kiln {
namespace portable {

void ge_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  compare_scalar_kernel(ctx, "aten::ge.Scalar_out", args, [](auto a, auto b) { return a >= b; });
}

void ge_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  compare_tensor_kernel(ctx, "aten::ge.Tensor_out", args, [](auto a, auto b) { return a >= b; });
}

}  // namespace portable
}  // namespace kiln
