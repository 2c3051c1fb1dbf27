// aten::alias_copy.out(Tensor self, *, Tensor(a!) out)
//
// ExecuTorch programs use it where the graph had an alias (e.g. a no-op slice); it is
// a plain copy.
#include "kernels/portable/util/identity_copy.h"

namespace kiln {
namespace portable {

void alias_copy_out(KernelContext& ctx, Span<EValue*> args) {
  identity_copy(ctx, "aten::alias_copy.out", args);
}

}  // namespace portable
}  // namespace kiln
