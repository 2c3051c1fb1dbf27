// aten::rsub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out)
//
// out = other - alpha * self, computed in out's dtype (integers wrap). Bool tensors are
// refused, as PyTorch refuses subtracting them.
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

void rsub_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::rsub.Scalar_out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  const ScalarArg other = r.scalar_arg(1);
  const ScalarArg alpha = r.scalar_arg(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->scalar_type() != ScalarType::Bool, Error::InvalidType, kName,
                    "subtraction of a bool tensor is not supported");
  unary_op<kRealTypes>(ctx, kName, *in, *out, [other, alpha](auto x) {
    using T = decltype(x);
    return wrap_sub(other.as<T>(), wrap_mul(alpha.as<T>(), x));
  });
}

}  // namespace portable
}  // namespace kiln
