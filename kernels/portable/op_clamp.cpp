// aten::clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out)
#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void clamp_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::clamp.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  bool has_lo = false;
  bool has_hi = false;
  const double lo = r.optional_scalar(1, 0.0, &has_lo);
  const double hi = r.optional_scalar(2, 0.0, &has_hi);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, has_lo || has_hi, Error::InvalidArgument, kName,
                    "at least one of min and max must be given");
  unary_op<kRealTypes>(ctx, kName, *in, *out, [=](auto x) {
    using T = decltype(x);
    // PyTorch applies min first, then max (so max wins when min > max); NaN passes.
    if (has_lo && x < static_cast<T>(lo)) x = static_cast<T>(lo);
    if (has_hi && x > static_cast<T>(hi)) x = static_cast<T>(hi);
    return x;
  });
}

}  // namespace portable
}  // namespace kiln
