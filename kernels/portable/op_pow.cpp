// aten::pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out)
// aten::pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out)
// aten::pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out)
//
// Float outs use std::pow (a Scalar exponent of 2 squares exactly as x * x; +-0.5 go
// through sqrt, as in PyTorch). Integer outs multiply (wrapping on overflow); a negative
// integer exponent gives the truncated quotient 1 / base^-e (1 for base 1, +-1 for base
// -1, else 0) where PyTorch allows it: elementwise exponents, not a Scalar exponent.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

namespace {

/// base^e for an integer type, by repeated squaring.
template <typename T>
T integer_pow(T base, T e) {
  if constexpr (std::is_signed_v<T>) {
    if (e < 0) {
      if (base == 1) return 1;
      if (base == -1) return static_cast<T>(e % 2 == 0 ? 1 : -1);
      return 0;
    }
  }
  T result = 1;
  for (auto n = static_cast<std::make_unsigned_t<T>>(e); n != 0; n >>= 1) {
    if (n & 1u) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
  }
  return result;
}

struct Pow {
  template <typename T>
  T operator()(T base, T e) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(base, e);
    } else {
      return integer_pow(base, e);
    }
  }
};

}  // namespace

void pow_tensor_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::pow.Tensor_Scalar_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const ScalarArg e = r.scalar_arg(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  if (is_int_type(out->scalar_type())) {
    KILN_KERNEL_CHECK(ctx, e.real >= 0 && e.real == std::floor(e.real), Error::InvalidArgument, kName,
                      "integer out needs a non-negative integral exponent, got %g", e.real);
  }
  unary_op<kRealTypes>(ctx, kName, *in, *out, [e](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      if (e.real == 2.0) return static_cast<T>(x * x);
      // PyTorch computes these as sqrt and rsqrt, which differ from std::pow at -0 and -inf
      // (sqrt(-inf) is NaN and sqrt(-0) is -0; pow gives +inf and +0).
      if (e.real == 0.5) return static_cast<T>(std::sqrt(x));
      if (e.real == -0.5) return static_cast<T>(static_cast<T>(1) / std::sqrt(x));
      return static_cast<T>(std::pow(x, static_cast<T>(e.real)));
    } else {
      return integer_pow(x, e.as<T>());
    }
  });
}

void pow_tensor_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::pow.Tensor_Tensor_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* base = r.tensor(0);
  Tensor* e = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  binary_op<kRealTypes>(ctx, kName, *base, *e, *out, Pow{});
}

void pow_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::pow.Scalar_out";
  ArgReader r(ctx, kName, args, 4);
  const ScalarArg base = r.scalar_arg(0);
  Tensor* e = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  unary_op<kRealTypes>(ctx, kName, *e, *out, [base](auto x) {
    using T = decltype(x);
    return Pow{}(base.as<T>(), x);
  });
}

}  // namespace portable
}  // namespace kiln
