// aten::lt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// aten::lt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/predicate.h"

namespace kiln {
namespace portable {

void lt_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  compare_scalar_kernel(ctx, "aten::lt.Scalar_out", args, [](auto a, auto b) { return a < b; });
}

void lt_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  compare_tensor_kernel(ctx, "aten::lt.Tensor_out", args, [](auto a, auto b) { return a < b; });
}

}  // namespace portable
}  // namespace kiln
