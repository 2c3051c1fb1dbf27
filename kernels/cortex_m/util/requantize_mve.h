// requantize() (requantize.h) in Helium lanes, and the narrowing stores of the output
// stage. Four int32 lanes at a time, each lane with its own multiplier and shift:
//   x << max(shift, 0)         VSHL by a vector (skipped when no shift is positive)
//   doubling high multiply     VQRDMULH: (2 x m + 2^31) >> 32, i.e. (x m + 2^30) >> 31
//   divide by 2^max(-shift,0)  VRSHL rounds half up; rounding half away from zero is the
//                              same after negative lanes step down by one (VSHR #31 of the
//                              lane is -1 for them); a lane that does not shift right must
//                              not step, which a VAND with the (zero) shift takes care of.
// No lane overflows where the scalar form does not: VQRDMULH saturates only for
// INT32_MIN * INT32_MIN, which a multiplier below 2^31 never is. Each helper says how many
// instructions it takes; the kernels count on those numbers.
#pragma once

#include "kernels/cortex_m/util/flavour.h"

#if defined(KILN_CM_MVE)
#include <cstdint>

namespace kiln {
namespace cortex_m {

/// How a block's shifts look, which decides the instructions requantizing takes.
enum class ShiftKind : uint8_t {
  kRightOnly,  ///< every shift is negative: no left shift, every lane steps (4 instructions)
  kAny,        ///< any shift in [kMinShift, kMaxShift] (6 instructions)
};

/// The ShiftKind of `count` shifts.
inline ShiftKind shift_kind(const int32_t* shifts, int32_t count, int32_t stride = 1) {
  for (int32_t i = 0; i < count; ++i) {
    if (shifts[i * stride] >= 0) return ShiftKind::kAny;
  }
  return ShiftKind::kRightOnly;
}

/// requantize() lane by lane: `left` = max(shift, 0), `neg_right` = min(shift, 0).
template <ShiftKind kKind>
__attribute__((always_inline)) inline int32x4_t requantize_lanes(int32x4_t x, int32x4_t multiplier, int32x4_t left,
                                                                 int32x4_t neg_right) {
  if (kKind == ShiftKind::kAny) {
    x = vqrdmulhq_s32(vshlq_s32(x, left), multiplier);
    return vrshlq_s32(vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, neg_right), 31)), neg_right);
  }
  x = vqrdmulhq_s32(x, multiplier);
  return vrshlq_s32(vqaddq_s32(x, vshrq_n_s32(x, 31)), neg_right);
}

/// The output stage's tail for eight results held as the even (`even`: lanes 0,2,4,6)
/// and odd (`odd`: lanes 1,3,5,7) channels of eight: saturating narrows into one int16
/// vector in channel order, the output offset (saturating: a clamped int16 plus an int8
/// offset keeps its side of the int8 range), the clamp, a narrowing store of eight bytes.
/// 6 instructions.
__attribute__((always_inline)) inline void store_even_odd(int32x4_t even, int32x4_t odd, int32_t output_offset,
                                                          int16x8_t lo, int16x8_t hi, int8_t* out) {
  int16x8_t y = vqmovntq_s32(vqmovnbq_s32(vreinterpretq_s16_s32(odd), even), odd);
  y = vminq_s16(vmaxq_s16(vqaddq_n_s16(y, static_cast<int16_t>(output_offset)), lo), hi);
  vstrbq_s16(out, y);
}

/// store_even_odd() for the first `count` (< 8) channels only.
__attribute__((always_inline)) inline void store_even_odd_first(int32x4_t even, int32x4_t odd,
                                                                int32_t output_offset, int16x8_t lo, int16x8_t hi,
                                                                int8_t* out, int32_t count) {
  int16x8_t y = vqmovntq_s32(vqmovnbq_s32(vreinterpretq_s16_s32(odd), even), odd);
  y = vminq_s16(vmaxq_s16(vqaddq_n_s16(y, static_cast<int16_t>(output_offset)), lo), hi);
  vstrbq_p_s16(out, y, vctp16q(static_cast<uint32_t>(count)));
}

/// Four results in lane order: output offset, clamp, a narrowing store of `count` (<= 4)
/// bytes.
__attribute__((always_inline)) inline void store_lanes(int32x4_t x, int32_t output_offset, int32x4_t lo,
                                                       int32x4_t hi, int8_t* out, mve_pred16_t lanes) {
  x = vminq_s32(vmaxq_s32(vaddq_n_s32(x, output_offset), lo), hi);
  vstrbq_p_s32(out, x, lanes);
}

}  // namespace cortex_m
}  // namespace kiln
#endif
