#include "backends/arm/vnpu/output_stage.h"

namespace kiln::vnpu {
namespace {

// A signed 128-bit integer as two 64-bit halves; portable to 32-bit targets without __int128.
struct Int128 {
  int64_t hi;
  uint64_t lo;
};

Int128 multiply(int64_t a, uint32_t b) {
  const uint64_t a_lo = static_cast<uint32_t>(a);
  const int64_t a_hi = a >> 32;  // arithmetic shift: a = a_hi * 2^32 + a_lo
  const uint64_t p0 = a_lo * b;
  const int64_t p1 = a_hi * static_cast<int64_t>(b);  // |a_hi| < 2^31, b < 2^32
  Int128 r;
  r.lo = p0 + (static_cast<uint64_t>(p1) << 32);
  r.hi = (p1 >> 32) + (r.lo < p0 ? 1 : 0);
  return r;
}

Int128 add(Int128 x, int64_t y) {
  Int128 r;
  r.lo = x.lo + static_cast<uint64_t>(y);
  r.hi = x.hi + (y < 0 ? -1 : 0) + (r.lo < x.lo ? 1 : 0);
  return r;
}

// Arithmetic right shift by 0..127, result clamped to int64 range.
int64_t shift_right(Int128 x, uint32_t shift) {
  if (shift == 0) {
    if (x.hi == 0 && x.lo <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(x.lo);
    if (x.hi == -1 && x.lo >= static_cast<uint64_t>(INT64_MAX) + 1u) return static_cast<int64_t>(x.lo);
    return x.hi < 0 ? INT64_MIN : INT64_MAX;
  }
  if (shift >= 64) return x.hi >> (shift - 64 > 63 ? 63 : shift - 64);
  const uint64_t lo = (x.lo >> shift) | (static_cast<uint64_t>(x.hi) << (64 - shift));
  const int64_t hi = x.hi >> shift;
  if (hi == 0 && lo <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(lo);
  if (hi == -1 && lo >= static_cast<uint64_t>(INT64_MAX) + 1u) return static_cast<int64_t>(lo);
  return hi < 0 ? INT64_MIN : INT64_MAX;
}

}  // namespace

int64_t scale_value_wide(int64_t value, uint32_t multiplier, uint32_t shift, RoundMode mode) {
  Int128 product = multiply(value, multiplier);
  int64_t round = 0;
  if (shift > 0) {
    switch (mode) {
      case RoundMode::Tfl:
        round = int64_t{1} << (shift - 1);
        // Double rounding (TOSA DOUBLE_ROUND / TFLite): an extra half step at bit 30.
        if (shift > 31) round += value >= 0 ? (int64_t{1} << 30) : -(int64_t{1} << 30);
        break;
      case RoundMode::Natural:
        round = int64_t{1} << (shift - 1);
        break;
      case RoundMode::Truncate:
        // Toward zero: bias negative products by 2^shift - 1 before the floor shift.
        round = product.hi < 0 ? (int64_t{1} << shift) - 1 : 0;
        break;
    }
  }
  int64_t r = shift_right(add(product, round), shift);
  if (r > INT32_MAX) r = INT32_MAX;
  if (r < INT32_MIN) r = INT32_MIN;
  return r;
}

}  // namespace kiln::vnpu
