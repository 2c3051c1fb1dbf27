// aten::hardswish.out(Tensor self, *, Tensor(a!) out)
// hardswish(x) = x * clamp(x + 3, 0, 6) / 6
#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void hardswish_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::hardswish.out", args, [](auto x) {
    using T = decltype(x);
    const T y = x + static_cast<T>(3);
    return x * (y < 0 ? static_cast<T>(0) : (y > 6 ? static_cast<T>(6) : y)) / static_cast<T>(6);
  });
}

}  // namespace portable
}  // namespace kiln
