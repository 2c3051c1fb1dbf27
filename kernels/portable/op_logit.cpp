// aten::logit.out(Tensor self, float? eps=None, *, Tensor(a!) out)
//
// log(z / (1 - z)), where z is self clamped to [eps, 1 - eps] when eps is given and not
// negative (lower bound checked first, so eps > 0.5 behaves as in PyTorch). Integer and
// bool inputs give a floating-point out.
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void logit_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::logit.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const double eps = r.is_none(1) ? -1.0 : r.double_value(1);  // negative: no clamping
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  unary_op<kFloatTypes>(ctx, kName, *in, *out, [eps](auto x) {
    using T = decltype(x);
    if (eps >= 0.0) {
      const T lo = static_cast<T>(eps);
      const T hi = static_cast<T>(1) - static_cast<T>(eps);
      x = x < lo ? lo : (x > hi ? hi : x);
    }
    return std::log(x / (static_cast<T>(1) - x));
  });
}

}  // namespace portable
}  // namespace kiln
