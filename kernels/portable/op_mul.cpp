// aten::mul.out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::mul.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

void mul_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::mul.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  binary_op<kAllTypes>(ctx, kName, *a, *b, *out, [](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>) {
      return x && y;
    } else {
      return wrap_mul(x, y);
    }
  });
}

void mul_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::mul.Scalar_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor(0);
  const ScalarArg other = r.scalar_arg(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  unary_op<kRealTypes>(ctx, kName, *a, *out, [other](auto x) {
    using T = decltype(x);
    return wrap_mul(x, other.as<T>());
  });
}

}  // namespace portable
}  // namespace kiln
