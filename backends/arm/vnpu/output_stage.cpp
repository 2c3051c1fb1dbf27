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

Int128 add128(Int128 x, Int128 y) {
  Int128 r;
  r.lo = x.lo + y.lo;
  r.hi = static_cast<int64_t>(static_cast<uint64_t>(x.hi) + static_cast<uint64_t>(y.hi) + (r.lo < x.lo ? 1u : 0u));
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

int64_t scale_value_wide(int64_t value, const Scaling& s) {
  const uint32_t shift = s.shift > 63 ? 63 : s.shift;
  Int128 product = multiply(value, s.multiplier);
  // The rounding term as a 128-bit value: a shift of 63 (refused at decode, but this must
  // not overflow either) needs 2^63 - 1.
  Int128 round{0, 0};
  if (shift > 0) {
    const uint64_t half = uint64_t{1} << (shift - 1);
    switch (s.round) {
      case RoundMode::Natural: round = Int128{0, half}; break;
      case RoundMode::Symmetric: round = Int128{0, value < 0 ? half - 1 : half}; break;
      case RoundMode::TruncateToZero:
        round = Int128{0, product.hi < 0 ? (half << 1) - 1 : 0};
        break;
      case RoundMode::TruncateToLower: break;
      case RoundMode::DoubleSymmetric:
      case RoundMode::DoubleAsymmetric: {
        round = Int128{0, half};
        const uint32_t dbl = s.double_round > 30 ? 30 : s.double_round;
        if (shift + dbl > 31) {
          const int64_t step = int64_t{1} << (30 - dbl);
          round = add(round, (s.round == RoundMode::DoubleSymmetric && value < 0) ? -step : step);
        }
        break;
      }
    }
  }
  int64_t r = shift_right(add128(product, round), shift);
  if (r > INT32_MAX) r = INT32_MAX;
  if (r < INT32_MIN) r = INT32_MIN;
  return r;
}

}  // namespace kiln::vnpu
