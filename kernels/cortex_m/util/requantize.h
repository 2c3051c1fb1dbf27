// The int8 fixed-point arithmetic of CMSIS-NN and TensorFlow Lite Micro, scalar form.
//
// A real scale s is carried as a Q31 multiplier m in [2^30, 2^31) and a shift e with
// s = m * 2^(e - 31). Requantizing an int32 accumulator x:
//   1. x * 2^max(e, 0)                       (wraps in 32 bits, as the C reference does)
//   2. (x * m + 2^30) >> 31                  doubling high multiply, rounding half up
//   3. divide by 2^max(-e, 0), rounding half away from zero
// The vector flavours (dot_s8.h) compute the same integers lane by lane.
#pragma once

#include <cstdint>

namespace kiln {
namespace cortex_m {

/// Shifts the kernels accept: a multiplier in Q31 never needs more.
constexpr int32_t kMinShift = -31;
constexpr int32_t kMaxShift = 30;

inline bool shift_in_range(int64_t shift) { return shift >= kMinShift && shift <= kMaxShift; }

/// (a * b + 2^30) >> 31 in 64 bits: the high word of the doubled product, rounded.
inline int32_t doubling_high_multiply(int32_t a, int32_t b) {
  const int64_t product = static_cast<int64_t>(a) * static_cast<int64_t>(b) + (int64_t{1} << 30);
  return static_cast<int32_t>(product >> 31);
}

/// x / 2^exponent rounded to nearest, ties away from zero; exponent in [0, 31].
inline int32_t divide_by_power_of_two(int32_t x, int32_t exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  int32_t result = x >> exponent;
  int32_t threshold = mask >> 1;
  if (result < 0) threshold += 1;
  if (remainder > threshold) result += 1;
  return result;
}

/// x * m * 2^(e - 31), rounded as CMSIS-NN's arm_nn_requantize does.
inline int32_t requantize(int32_t x, int32_t multiplier, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  const int32_t scaled = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
  return divide_by_power_of_two(doubling_high_multiply(scaled, multiplier), right);
}

inline int32_t clamp(int32_t x, int32_t lo, int32_t hi) { return x < lo ? lo : (x > hi ? hi : x); }

}  // namespace cortex_m
}  // namespace kiln
