// aten::hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out)
//
// ReLU6 reaches programs as hardtanh(0, 6).
#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void hardtanh_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::hardtanh.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = nullptr;
  Tensor* out = nullptr;
  const double lo = r.scalar(1);
  const double hi = r.scalar(2);
  if (!unary_tensors(r, 0, 3, &in, &out)) return;
  unary_op<kRealTypes>(ctx, kName, *in, *out, [lo, hi](auto x) {
    using T = decltype(x);
    const T tlo = static_cast<T>(lo);
    const T thi = static_cast<T>(hi);
    // Written so that NaN passes through (both comparisons are false).
    return x < tlo ? tlo : (x > thi ? thi : x);
  });
}

}  // namespace portable
}  // namespace kiln
