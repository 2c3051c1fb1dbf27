// The p-norm distance between two vectors, for _cdist_forward and _pdist_forward.
#pragma once

#include <cmath>
#include <cstddef>

namespace kiln {
namespace portable {

/// ||a - b||_p over m elements (stride 1), accumulated in double: p = 0 counts the
/// differing elements, p = inf takes the largest difference, p = 1 and 2 avoid pow.
template <typename T>
T p_norm_distance(const T* a, const T* b, size_t m, double p) {
  double acc = 0;
  for (size_t i = 0; i < m; ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (p == 0) {
      acc += d != 0 ? 1.0 : 0.0;
    } else if (std::isinf(p)) {
      acc = d > acc || d != d ? d : acc;
    } else if (p == 1) {
      acc += d;
    } else if (p == 2) {
      acc += d * d;
    } else {
      acc += std::pow(d, p);
    }
  }
  if (p == 0 || p == 1 || std::isinf(p)) return static_cast<T>(acc);
  return static_cast<T>(p == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / p));
}

}  // namespace portable
}  // namespace kiln
