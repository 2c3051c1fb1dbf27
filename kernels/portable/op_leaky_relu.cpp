// aten::leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out)
#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void leaky_relu_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::leaky_relu.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const double slope = r.scalar(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  unary_op<kFloatTypes>(ctx, kName, *in, *out, [slope](auto x) {
    using T = decltype(x);
    return x > static_cast<T>(0) ? x : x * static_cast<T>(slope);
  });
}

}  // namespace portable
}  // namespace kiln
