// aten::detach_copy.out(Tensor self, *, Tensor(a!) out)
// aten::lift_fresh_copy.out(Tensor self, *, Tensor(a!) out)
//
// Autograd bookkeeping in PyTorch (detach from the graph, lift a constant into a fresh
// tensor); at run time both are a plain copy.
#include "kernels/portable/util/identity_copy.h"

namespace kiln {
namespace portable {

void detach_copy_out(KernelContext& ctx, Span<EValue*> args) {
  identity_copy(ctx, "aten::detach_copy.out", args);
}

void lift_fresh_copy_out(KernelContext& ctx, Span<EValue*> args) {
  identity_copy(ctx, "aten::lift_fresh_copy.out", args);
}

}  // namespace portable
}  // namespace kiln
