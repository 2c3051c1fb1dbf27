// aten::alias_copy.out(Tensor self, *, Tensor(a!) out)
//
// ExecuTorch programs use it where the graph had an alias (e.g. a no-op slice); it is
// a plain copy.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void alias_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::alias_copy.out";
  ArgReader r(ctx, kName, args, 3);
  Tensor* in = r.tensor(0);
  Tensor* out = r.tensor(1);
  if (!r.ok()) return;
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out") ||
      !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  copy_all(*in, *out);
}

}  // namespace portable
}  // namespace kiln
