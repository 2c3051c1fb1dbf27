// Division with PyTorch's rounding modes, and the two remainders, for every real dtype.
//
// Floating point follows IEEE (x / 0 is +-inf or NaN). Integer division by zero has no
// result (PyTorch raises ZeroDivisionError): the functions return 0 and set `by_zero`,
// and the kernel fails after the loop. The one integer overflow, MIN / -1, wraps to MIN
// (remainder 0) instead of trapping.
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

/// a / b rounded toward zero.
template <typename T>
T divide_trunc(T a, T b, bool& by_zero) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::trunc(a / b);
  } else {
    if (b == 0) {
      by_zero = true;
      return 0;
    }
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return wrap_sub(static_cast<T>(0), a);
    }
    return static_cast<T>(a / b);
  }
}

/// a / b rounded toward -inf (Python's //). Floats use Python's algorithm through fmod,
/// so that the result is the exact floor of the real quotient, not of a rounded one.
template <typename T>
T divide_floor(T a, T b, bool& by_zero) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0) return a / b;
    const T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= static_cast<T>(1);
    if (div == 0) return std::copysign(static_cast<T>(0), a / b);
    T floored = std::floor(div);
    if (div - floored > static_cast<T>(0.5)) floored += static_cast<T>(1);
    return floored;
  } else {
    const T q = divide_trunc(a, b, by_zero);
    if constexpr (std::is_signed_v<T>) {
      if (b != 0 && b != -1 && a % b != 0 && (a < 0) != (b < 0)) return static_cast<T>(q - 1);
    }
    return q;
  }
}

/// The remainder of divide_trunc: the sign of a (C's %, std::fmod; PyTorch's fmod).
template <typename T>
T remainder_trunc(T a, T b, bool& by_zero) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fmod(a, b);
  } else {
    if (b == 0) {
      by_zero = true;
      return 0;
    }
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
    }
    return static_cast<T>(a % b);
  }
}

/// The remainder of divide_floor: the sign of b (Python's %, PyTorch's remainder).
template <typename T>
T remainder_floor(T a, T b, bool& by_zero) {
  T mod = remainder_trunc(a, b, by_zero);
  if constexpr (std::is_signed_v<T>) {
    if (mod != 0 && (b < 0) != (mod < 0)) mod = static_cast<T>(mod + b);
  }
  return mod;
}

/// Fails the kernel if an integer division by zero happened.
inline bool check_no_division_by_zero(KernelContext& ctx, const char* name, bool by_zero) {
  if (by_zero) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, name, "integer division by zero");
    return false;
  }
  return true;
}

/// The kernel body of a division-like op with arguments [self, other, out, out]:
/// out = divide(self, other, by_zero), broadcast, computed in out's dtype.
template <typename Divide>
void division_tensor_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, Divide divide) {
  ArgReader r(ctx, name, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  bool by_zero = false;
  binary_op<kRealTypes>(ctx, name, *a, *b, *out, [&](auto x, auto y) { return divide(x, y, by_zero); });
  check_no_division_by_zero(ctx, name, by_zero);
}

/// Like division_tensor_kernel with a Scalar other, converted to out's dtype.
template <typename Divide>
void division_scalar_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, Divide divide) {
  ArgReader r(ctx, name, args, 4);
  Tensor* a = r.tensor(0);
  const ScalarArg other = r.scalar_arg(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  bool by_zero = false;
  unary_op<kRealTypes>(ctx, name, *a, *out, [&](auto x) {
    using T = decltype(x);
    return divide(x, other.as<T>(), by_zero);
  });
  check_no_division_by_zero(ctx, name, by_zero);
}

}  // namespace portable
}  // namespace kiln
