// requantize() (requantize.h) in few instructions for the DSP flavour, where it runs once
// per output in scalar registers. Two facts make it short where they hold:
//   - |x| < 2^30: the doubling high multiply (x * m + 2^30) >> 31 is SMMULR(2x, m), the
//     most significant word of 2 x m rounded, one instruction (ACLE has no intrinsic);
//   - right shift r >= 1 on a value below 2^30: rounding half away from zero is
//     (v + 2^(r-1) - (v < 0)) >> r, an add, a subtract of the sign bit and a shift.
// The kernels check both per block of channels (requantize_fast_ok) and take requantize()
// otherwise; both give the same integers.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/requantize.h"

#if defined(KILN_CM_DSP)
namespace kiln {
namespace cortex_m {

/// The most significant word of a * b, rounded: (a * b + 2^31) >> 32.
__attribute__((always_inline)) inline int32_t smmulr(int32_t a, int32_t b) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

/// Parameters of requantize_fast for one channel: `right` = -shift (>= 1), `round` =
/// 2^(right - 1).
struct FastRequant {
  int32_t multiplier;
  int32_t right;
  int32_t round;
};

/// requantize(x, multiplier, -right) for |x| < 2^30 and right >= 1.
__attribute__((always_inline)) inline int32_t requantize_fast(int32_t x, const FastRequant& q) {
  const int32_t v = smmulr(x * 2, q.multiplier);
  return (v + q.round - static_cast<int32_t>(static_cast<uint32_t>(v) >> 31)) >> q.right;
}

/// Whether requantize_fast serves a channel with `shift` whose accumulators stay within
/// `bound` in magnitude.
inline bool requantize_fast_ok(int32_t shift, int64_t bound) { return shift <= -1 && bound < (int64_t{1} << 30); }

/// The output offset and clamp of a requantized value, as a byte: SSAT clamps to int8
/// (one instruction); a narrower activation range (kClamp) adds two compares.
template <bool kClamp>
__attribute__((always_inline)) inline int8_t to_output(int32_t y, int32_t output_offset, int32_t lo, int32_t hi) {
  y = __ssat(y + output_offset, 8);
  if (kClamp) y = clamp(y, lo, hi);
  return static_cast<int8_t>(y);
}

}  // namespace cortex_m
}  // namespace kiln
#endif
