// aten::pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out)
//
// Float outs use std::pow (squares exactly as x * x; exponents +-0.5 through sqrt, as in
// PyTorch); integer outs use repeated multiplication and need a non-negative integral
// exponent, as in PyTorch.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

void pow_tensor_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::pow.Tensor_Scalar_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const double e = r.scalar(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  if (is_int_type(out->scalar_type())) {
    KILN_KERNEL_CHECK(ctx, e >= 0 && e == std::floor(e), Error::InvalidArgument, kName,
                      "integer out needs a non-negative integral exponent, got %g", e);
  }
  unary_op<kRealTypes>(ctx, kName, *in, *out, [e](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      if (e == 2.0) return static_cast<T>(x * x);
      // PyTorch computes these as sqrt and rsqrt, which differ from std::pow at -0 and -inf
      // (sqrt(-inf) is NaN and sqrt(-0) is -0; pow gives +inf and +0).
      if (e == 0.5) return static_cast<T>(std::sqrt(x));
      if (e == -0.5) return static_cast<T>(static_cast<T>(1) / std::sqrt(x));
      return static_cast<T>(std::pow(x, static_cast<T>(e)));
    } else {
      T result = 1;
      T base = x;
      for (uint64_t n = static_cast<uint64_t>(e); n != 0; n >>= 1) {
        if (n & 1u) result = wrap_mul(result, base);
        base = wrap_mul(base, base);
      }
      return result;
    }
  });
}

}  // namespace portable
}  // namespace kiln
