// aten::tanh.out(Tensor self, *, Tensor(a!) out)
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void tanh_out(KernelContext& ctx, Span<EValue*> args) {
  unary_kernel<kFloatTypes>(ctx, "aten::tanh.out", args, [](auto x) {
    return std::tanh(x);
  });
}

}  // namespace portable
}  // namespace kiln
