// aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)
// aten::add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out)
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

void add_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::add.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  const ScalarArg alpha = r.scalar_arg(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  binary_op<kRealTypes>(ctx, kName, *a, *b, *out, [alpha](auto x, auto y) {
    using T = decltype(x);
    return wrap_add(x, wrap_mul(alpha.as<T>(), y));
  });
}

void add_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::add.Scalar_out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* a = r.tensor(0);
  const ScalarArg other = r.scalar_arg(1);
  const ScalarArg alpha = r.scalar_arg(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  unary_op<kRealTypes>(ctx, kName, *a, *out, [other, alpha](auto x) {
    using T = decltype(x);
    return wrap_add(x, wrap_mul(alpha.as<T>(), other.as<T>()));
  });
}

}  // namespace portable
}  // namespace kiln
