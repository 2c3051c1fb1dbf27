// Writing a Scalar argument into tensors of any dtype (full_like, fill, ones, scalar_tensor,
// arange, scatter.value_out), without undefined behaviour for values a dtype cannot hold.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

/// `v` converted to T. In-range values convert as in C++ (toward zero for integers);
/// for integer T, NaN gives 0, values beyond int64 saturate and the rest wrap into T's
/// width, so a hostile program cannot trigger undefined behaviour. (PyTorch refuses such
/// values before they reach a kernel.)
template <typename T>
T convert_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    int64_t i = 0;
    if (v != v) {
      i = 0;
    } else if (v >= 9223372036854775807.0) {
      i = INT64_MAX;
    } else if (v <= -9223372036854775808.0) {
      i = INT64_MIN;
    } else {
      i = static_cast<int64_t>(v);
    }
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(i)));
  } else {
    return static_cast<T>(v);
  }
}

/// A Scalar argument as T: integral scalars keep their 64 bits (wrapping into narrower
/// integers), floating ones go through convert_double.
template <typename T>
T scalar_as(const ScalarArg& s) {
  if (s.integral) return s.as<T>();
  return convert_double<T>(s.real);
}

/// Sets every element of `out` (dtype in kAllTypes, else the kernel fails) to `value`.
inline bool fill_scalar(KernelContext& ctx, const char* op, Tensor& out, const ScalarArg& value) {
  return dispatch_dtype<kAllTypes>(ctx, op, out.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T v = scalar_as<T>(value);
    T* o = out.mutable_data_ptr<T>();
    for (size_t i = 0; i < out.numel(); ++i) o[i] = v;
  });
}

}  // namespace portable
}  // namespace kiln
