// Integer arithmetic that wraps around on overflow, as PyTorch's integer tensors do.
//
// Signed overflow is undefined behaviour in C++, so integer results are computed in an
// unsigned type of at least 32 bits and converted back; floating point is unchanged.
#pragma once

#include <cstdint>
#include <type_traits>

namespace kiln {
namespace portable {

template <typename T>
using WrapType = std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>;

template <typename T>
inline T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  } else {
    return static_cast<T>(a + b);
  }
}

template <typename T>
inline T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  } else {
    return static_cast<T>(a - b);
  }
}

template <typename T>
inline T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  } else {
    return static_cast<T>(a * b);
  }
}

}  // namespace portable
}  // namespace kiln
