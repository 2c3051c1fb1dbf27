// aten::gelu.out(Tensor self, *, str approximate="none", Tensor(a!) out)
//
// approximate="none": x/2 * (1 + erf(x / sqrt(2)));
// approximate="tanh": x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
#include <cmath>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void gelu_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::gelu.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const Span<const char> approximate = r.string(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  if (string_equals(approximate, "none")) {
    unary_op<kFloatTypes>(ctx, kName, *in, *out, [](auto x) {
      using T = decltype(x);
      return static_cast<T>(0.5) * x * (static_cast<T>(1) + std::erf(x * static_cast<T>(0.70710678118654752440)));
    });
  } else if (string_equals(approximate, "tanh")) {
    unary_op<kFloatTypes>(ctx, kName, *in, *out, [](auto x) {
      using T = decltype(x);
      const T k = static_cast<T>(0.79788456080286535588);  // sqrt(2 / pi)
      const T inner = k * (x + static_cast<T>(0.044715) * x * x * x);
      return static_cast<T>(0.5) * x * (static_cast<T>(1) + std::tanh(inner));
    });
  } else {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName,
                     "approximate must be \"none\" or \"tanh\", got \"%.*s\"",
                     static_cast<int>(approximate.size()), approximate.data());
  }
}

}  // namespace portable
}  // namespace kiln
