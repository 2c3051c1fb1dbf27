// aten::elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *,
//     Tensor(a!) out)
//
// x > 0: scale * x; otherwise scale * alpha * (exp(x * input_scale) - 1). NaN passes
// through. (SELU reaches programs as elu with its constants.)
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void elu_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::elu.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const double alpha = r.scalar(1);
  const double scale = r.scalar(2);
  const double input_scale = r.scalar(3);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  unary_op<kFloatTypes>(ctx, kName, *in, *out, [=](auto x) {
    using T = decltype(x);
    if (x <= static_cast<T>(0)) {
      return static_cast<T>(std::expm1(x * static_cast<T>(input_scale)) * static_cast<T>(alpha * scale));
    }
    return x * static_cast<T>(scale);
  });
}

}  // namespace portable
}  // namespace kiln
