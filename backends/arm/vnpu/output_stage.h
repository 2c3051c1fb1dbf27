// The output stage shared by all operations: accumulator → scale (31/32-bit multiplier,
// 6-bit shift, rounding mode) → + OFM zero point → optional table lookup → clip to the
// activation limits and the OFM type. The scaling is TOSA's apply_scale_32 for the double and
// single rounding modes, extended by the Ethos-U85's other modes; it is computed with 128-bit
// products so that 40/48-bit accumulators with 32-bit multipliers never overflow.
//
// 16-bit interpolating tables (Ethos-U85) look the accumulator up before the scaling: the
// table's (base << 7) + slope * fraction result is what OFM_SCALE then scales (Vela gives
// such operations a scale of 1 >> 7). 8-bit tables look the scaled, zero-point-adjusted value
// up, as on the Ethos-U55. So do 16-bit tables with a 16-bit result (Ethos-U55/U65, the
// Ethos-U85's LUT_S16_S16), rounding the interpolation back to 16 bits:
// base + ((slope * fraction + 64) >> 7), TFLite's int16 LUTLookup. Vela folds TOSA's RESCALE
// by 2^-7 after an int16 TABLE into such a table, and a RESCALE before it into OFM_SCALE.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/op_desc.h"

namespace kiln::vnpu {

/// round(value * multiplier / 2^shift) with `s`'s rounding, saturated to int32, for any
/// 64-bit value (128-bit intermediate). Shifts above 62 must have been refused at decode.
int64_t scale_value_wide(int64_t value, const Scaling& s);

/// The same; values of 30 bits or fewer (every 8-bit accumulator in practice) take a plain
/// 64-bit path: |value * multiplier| < 2^61 and the rounding terms < 2^62 cannot overflow.
inline int64_t scale_value(int64_t value, const Scaling& s) {
  if (value >= (int64_t{1} << 30) || value < -(int64_t{1} << 30) || s.shift > 61) {
    return scale_value_wide(value, s);
  }
  const int64_t product = value * static_cast<int64_t>(s.multiplier);
  const uint32_t shift = s.shift;
  int64_t round = 0;
  if (shift > 0) {
    switch (s.round) {
      case RoundMode::Natural: round = int64_t{1} << (shift - 1); break;
      case RoundMode::Symmetric: round = (int64_t{1} << (shift - 1)) - (value < 0 ? 1 : 0); break;
      case RoundMode::TruncateToZero: round = product < 0 ? (int64_t{1} << shift) - 1 : 0; break;
      case RoundMode::TruncateToLower: round = 0; break;
      case RoundMode::DoubleSymmetric:
      case RoundMode::DoubleAsymmetric: {
        round = int64_t{1} << (shift - 1);
        if (shift + s.double_round > 31) {
          const int64_t step = int64_t{1} << (30 - s.double_round);
          round += (s.round == RoundMode::DoubleSymmetric && value < 0) ? -step : step;
        }
        break;
      }
    }
  }
  int64_t r = (product + round) >> shift;
  if (r > INT32_MAX) r = INT32_MAX;
  if (r < INT32_MIN) r = INT32_MIN;
  return r;
}

/// Interpolating 16-bit table lookup: index = top 9 bits of the value + 32768, fraction the
/// low 7; returns (base << 7) + slope * fraction.
inline int64_t lookup_interpolated(const uint8_t* table, int64_t value) {
  if (value < -32768) value = -32768;
  if (value > 32767) value = 32767;
  const uint32_t u = static_cast<uint32_t>(value + 32768);
  const uint8_t* e = table + 4u * (u >> 7);
  const int32_t base = static_cast<int16_t>(e[0] | (e[1] << 8));
  const int32_t slope = static_cast<int16_t>(e[2] | (e[3] << 8));
  return int64_t{base} * 128 + int64_t{slope} * static_cast<int32_t>(u & 127u);
}

/// An interpolated lookup's 16-bit value: its 7 fractional bits rounded off, half up
/// (base + ((slope * fraction + 64) >> 7)).
inline int64_t round_to_16_bits(int64_t interpolated) { return (interpolated + 64) >> 7; }

/// Parameters of the output stage of one operation, resolved against the OFM type and the
/// internal memory.
struct OutputStage {
  int32_t zero_point = 0;
  int64_t clip_min = -128;
  int64_t clip_max = 127;
  LutKind lut = LutKind::None;
  /// The table in the internal memory (null without a table).
  const uint8_t* table = nullptr;
  /// Entries of an Int8 table are signed (else unsigned, indexed by value 0..255).
  bool table_signed = true;

  /// Before scaling: the Ethos-U85's 16-bit interpolating table with a 32-bit result, else
  /// the value unchanged.
  int64_t before_scaling(int64_t acc) const {
    return lut == LutKind::Int16Interpolated ? lookup_interpolated(table, acc) : acc;
  }

  /// After scaling: + zero point, 8-bit tables, clipping.
  int64_t finish(int64_t scaled) const {
    int64_t v = scaled + zero_point;
    if (lut == LutKind::Int16InterpolatedAfterScaling) {
      v = round_to_16_bits(lookup_interpolated(table, v));
    } else if (lut == LutKind::Int8 || lut == LutKind::Int8ToInt16 || lut == LutKind::Int8ToInt32) {
      int64_t idx;
      if (table_signed || lut != LutKind::Int8) {
        idx = (v < -128 ? -128 : (v > 127 ? 127 : v)) + 128;
      } else {
        idx = v < 0 ? 0 : (v > 255 ? 255 : v);
      }
      const uint8_t* e;
      switch (lut) {
        case LutKind::Int8:
          v = table_signed ? static_cast<int8_t>(table[idx]) : table[idx];
          break;
        case LutKind::Int8ToInt16:
          e = table + 2 * idx;
          v = static_cast<int16_t>(e[0] | (e[1] << 8));
          break;
        default:
          e = table + 4 * idx;
          v = static_cast<int32_t>(e[0] | (e[1] << 8) | (e[2] << 16) | (static_cast<uint32_t>(e[3]) << 24));
          break;
      }
    }
    if (v < clip_min) v = clip_min;
    if (v > clip_max) v = clip_max;
    return v;
  }
};

}  // namespace kiln::vnpu
