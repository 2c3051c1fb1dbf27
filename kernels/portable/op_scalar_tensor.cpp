// aten::scalar_tensor.out(Scalar s, *, Tensor(a!) out)
//
// A 0-dim tensor holding `s` in out's dtype.
#include "kernels/portable/util/scalar_fill.h"

namespace kiln {
namespace portable {

void scalar_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::scalar_tensor.out";
  ArgReader r(ctx, kName, args, 3);
  const ScalarArg value = r.scalar_arg(0);
  Tensor* out = r.tensor(1);
  if (!r.ok() || !resize_output(ctx, kName, *out, {})) return;
  fill_scalar(ctx, kName, *out, value);
}

}  // namespace portable
}  // namespace kiln
