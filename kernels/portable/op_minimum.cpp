// aten::minimum.out(Tensor self, Tensor other, *, Tensor(a!) out)
//
// NaN propagates (PyTorch's minimum returns NaN when either input is NaN).
#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void minimum_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::minimum.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  binary_op<kAllTypes>(ctx, kName, *a, *b, *out, [](auto x, auto y) {
    if (x != x) return x;  // NaN (never true for integers)
    if (y != y) return y;
    return y < x ? y : x;
  });
}

}  // namespace portable
}  // namespace kiln
