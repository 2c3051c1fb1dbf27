// aten::div.out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::div.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
//
// True division: the out tensor is floating point even for integer inputs (PyTorch's
// rule), and x / 0 follows IEEE (inf or nan), as in PyTorch.
#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void div_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::div.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  binary_op<kFloatTypes>(ctx, kName, *a, *b, *out, [](auto x, auto y) { return x / y; });
}

void div_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::div.Scalar_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor(0);
  const double other = r.scalar(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  unary_op<kFloatTypes>(ctx, kName, *a, *out, [other](auto x) {
    using T = decltype(x);
    return x / static_cast<T>(other);
  });
}

}  // namespace portable
}  // namespace kiln
