// The output stage shared by all operations: accumulator → scale (32-bit multiplier, 6-bit
// shift, rounding mode) → + OFM zero point → optional table lookup → clip to the activation
// limits and the OFM type. The scaling is TOSA's apply_scale_32 (double rounding for the TFL
// mode, single rounding for NATURAL), computed with 128-bit products so that 40/48-bit
// accumulators with 32-bit multipliers never overflow.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/commands.h"

namespace kiln::vnpu {

/// round(value * multiplier / 2^shift) in `mode`, saturated to int32, for any 64-bit value
/// (128-bit intermediate).
int64_t scale_value_wide(int64_t value, uint32_t multiplier, uint32_t shift, RoundMode mode);

/// The same; values of 30 bits or fewer (every 8-bit accumulator in practice) take a plain
/// 64-bit path: |value * multiplier| < 2^62 and the rounding term < 2^62 cannot overflow.
inline int64_t scale_value(int64_t value, uint32_t multiplier, uint32_t shift, RoundMode mode) {
  if (value >= (int64_t{1} << 30) || value < -(int64_t{1} << 30) || shift > 62) {
    return scale_value_wide(value, multiplier, shift, mode);
  }
  const int64_t product = value * static_cast<int64_t>(multiplier);
  int64_t round = 0;
  if (shift > 0) {
    if (mode == RoundMode::Truncate) {
      round = product < 0 ? (int64_t{1} << shift) - 1 : 0;
    } else {
      round = int64_t{1} << (shift - 1);
      if (mode == RoundMode::Tfl && shift > 31) {
        round += value >= 0 ? (int64_t{1} << 30) : -(int64_t{1} << 30);
      }
    }
  }
  int64_t r = (product + round) >> shift;
  if (r > INT32_MAX) r = INT32_MAX;
  if (r < INT32_MIN) r = INT32_MIN;
  return r;
}

/// Parameters of the output stage that come from the registers of one operation.
struct OutputStage {
  RoundMode round = RoundMode::Tfl;
  int32_t zero_point = 0;
  int32_t clip_min = -128;
  int32_t clip_max = 127;
  /// Table from the internal memory, or null. 8-bit tables have 256 entries indexed by
  /// value+128 (signed) / value (unsigned); 16-bit tables are not modelled yet.
  const uint8_t* lut = nullptr;
  bool lut_signed = true;

  int32_t finish(int64_t scaled) const {
    int64_t v = scaled + zero_point;
    if (lut != nullptr) {
      int64_t idx = v < -128 ? -128 : (v > 127 ? 127 : v);
      if (!lut_signed) idx = (v < 0 ? 0 : (v > 255 ? 255 : v)) - 128;
      v = lut_signed ? static_cast<int8_t>(lut[idx + 128]) : lut[idx + 128];
    }
    if (v < clip_min) v = clip_min;
    if (v > clip_max) v = clip_max;
    return static_cast<int32_t>(v);
  }
};

}  // namespace kiln::vnpu
