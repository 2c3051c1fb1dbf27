// Integer arithmetic that wraps (two's complement) instead of overflowing. A hostile stream
// can hand any operation 64-bit feature maps, 48-bit biases or kept accumulators whose sums
// and products overflow int64_t, which is undefined behaviour. The NPU's own registers wrap;
// valid streams never come near 64 bits, so their results equal plain arithmetic.
#pragma once

#include <cstdint>

namespace kiln::vnpu {

inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrapping_neg(int64_t a) { return static_cast<int64_t>(0u - static_cast<uint64_t>(a)); }

/// a * b, or UINT64_MAX when that does not fit: for counts (work, elements, bytes) from
/// 16-bit register fields, whose products can pass 2^64 (six fields of 2^16).
inline uint64_t saturating_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

}  // namespace kiln::vnpu
