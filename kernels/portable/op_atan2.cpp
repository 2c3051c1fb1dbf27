// aten::atan2.out(Tensor self, Tensor other, *, Tensor(a!) out)
//
// The angle of the point (other, self), broadcast. Integer and bool inputs give a
// floating-point out (PyTorch promotes them).
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void atan2_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::atan2.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  binary_op<kFloatTypes>(ctx, kName, *a, *b, *out, [](auto y, auto x) { return std::atan2(y, x); });
}

}  // namespace portable
}  // namespace kiln
