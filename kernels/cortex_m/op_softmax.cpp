// cortex_m::softmax.out(Tensor input, int dim, int input_zero_point,
//     int output_zero_point, int input_multiplier, int input_shift, int diff_min,
//     *, Tensor(a!) out)
//
// int8 softmax over the last dim in integer arithmetic (TensorFlow Lite Micro's and
// CMSIS-NN's): differences to the row maximum are scaled by (multiplier, shift) into
// Q5.26, exponentiated by a fixed-point polynomial with barrel-shifted exp(-2^k)
// factors, summed with 12 integer bits, and divided by the sum through a Newton-Raphson
// reciprocal; the output has scale 1/256 and zero point -128. Differences below
// diff_min give -128.
#include <climits>

#include "kernels/cortex_m/util/args.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {
namespace {

constexpr int32_t kAccumulationBits = 12;

// Saturating rounding doubling high multiply, rounding half away from zero.
int32_t mul_sat(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  const int64_t product = static_cast<int64_t>(a) * b;
  const int64_t nudge = product >= 0 ? (int64_t{1} << 30) : 1 - (int64_t{1} << 30);
  return static_cast<int32_t>((product + nudge) / (int64_t{1} << 31));
}

// x * 2^exponent, saturating.
int32_t mul_pow2(int32_t x, int32_t exponent) {
  const int32_t threshold = static_cast<int32_t>((int64_t{1} << (31 - exponent)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

// exp(x) for x <= 0 in Q5.26, result in Q0.31.
int32_t exp_on_negative_values(int32_t x) {
  const int32_t quarter = 1 << 24;
  const int32_t x_mod_quarter = (x & (quarter - 1)) - quarter;  // in [-1/4, 0)
  const int32_t remainder = x_mod_quarter - x;
  // exp on [-1/4, 0): exp(-1/8) * (1 + y + y^2/2 + y^3/6 + y^4/24), y = x + 1/8 in Q0.31.
  const int32_t y = static_cast<int32_t>(static_cast<uint32_t>(x_mod_quarter) << 5) + (1 << 28);
  const int32_t y2 = mul_sat(y, y);
  const int32_t y3 = mul_sat(y2, y);
  const int32_t y4_over_4 = divide_by_power_of_two(mul_sat(y2, y2), 2);
  const int32_t poly = divide_by_power_of_two(mul_sat(y4_over_4 + y3, 715827883) + y2, 1);  // 715827883 = 1/3
  const int32_t exp_minus_one_eighth = 1895147668;
  int32_t result = exp_minus_one_eighth + mul_sat(exp_minus_one_eighth, y + poly);
  // exp(-2^k) for k = -2 .. 4, applied for each bit of the remainder.
  static constexpr int32_t kFactors[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int32_t k = 0; k < 7; ++k) {
    if (remainder & (1 << (24 + k))) result = mul_sat(result, kFactors[k]);
  }
  return x == 0 ? INT32_MAX : result;
}

// 1 / (1 + x) for x in [0, 1), Q0.31 in, Q2.29-based Newton-Raphson, Q0.31 out (x 1/2).
int32_t one_over_one_plus_x(int32_t x) {
  const int64_t sum = static_cast<int64_t>(x) + INT32_MAX;
  const int32_t half_denominator = static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
  int32_t r = 1515870810 + mul_sat(half_denominator, -1010580540);  // 48/17 - 32/17 * d
  const int32_t one = 1 << 29;
  for (int i = 0; i < 3; ++i) r += mul_pow2(mul_sat(r, one - mul_sat(half_denominator, r)), 2);
  return mul_pow2(r, 1);
}

int32_t count_leading_zeros(uint32_t x) {
  if (x == 0) return 32;
  int32_t n = 0;
  while (!(x & 0x80000000u)) {
    x <<= 1;
    ++n;
  }
  return n;
}

}  // namespace

void softmax_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::softmax.out";
  ArgReader r(ctx, kName, args, 9);
  Tensor* in = r.tensor(0);
  const int64_t dim = r.int_value(1);
  (void)r.int_value(2);  // input zero point: only differences to the row maximum matter
  const int64_t out_zp = r.int_value(3);
  const int64_t mult = r.int_value(4);
  const int64_t shift = r.int_value(5);
  const int64_t diff_min = r.int_value(6);
  Tensor* out = r.tensor(7);
  if (!r.ok()) return;
  int32_t axis = 0;
  if (!check_int8(ctx, kName, *in, "input") || !check_int8(ctx, kName, *out, "out") ||
      !portable::normalize_dim(ctx, kName, dim, in->dim(), &axis) ||
      !portable::resize_output_like(ctx, kName, *out, *in) ||
      !check_range(ctx, kName, out_zp, -128, -128, "output_zero_point") ||
      !check_range(ctx, kName, mult, 0, INT32_MAX, "input_multiplier") ||
      !check_range(ctx, kName, shift, 0, 30, "input_shift") ||
      !check_range(ctx, kName, diff_min, INT32_MIN, 0, "diff_min")) {
    return;
  }
  if (in->dim() == 0 || axis != in->dim() - 1) {
    KILN_KERNEL_FAIL(ctx, Error::NotSupported, kName, "only the last dim (of %d) is supported, got dim %lld",
                     static_cast<int>(in->dim()), static_cast<long long>(dim));
    return;
  }
  const int32_t row = in->size(axis);
  if (row <= 0) return;
  // 12 integer bits hold the sum of up to 4095 terms below 1.
  if (row >= (1 << kAccumulationBits)) {
    KILN_KERNEL_FAIL(ctx, Error::NotSupported, kName, "rows of %d values; at most %d are supported", static_cast<int>(row),
                     (1 << kAccumulationBits) - 1);
    return;
  }
  const size_t rows = in->numel() / static_cast<size_t>(row);
  const int32_t scale = static_cast<int32_t>(int64_t{1} << shift);
  const int32_t m = static_cast<int32_t>(mult);
  const int32_t floor = static_cast<int32_t>(diff_min);
  for (size_t k = 0; k < rows; ++k) {
    const int8_t* x = in->const_data_ptr<int8_t>() + k * static_cast<size_t>(row);
    int8_t* y = out->mutable_data_ptr<int8_t>() + k * static_cast<size_t>(row);
    int32_t max = x[0];
    for (int32_t i = 1; i < row; ++i) max = x[i] > max ? x[i] : max;
    int32_t sum = 0;
    for (int32_t i = 0; i < row; ++i) {
      const int32_t diff = x[i] - max;
      if (diff >= floor) sum += divide_by_power_of_two(exp_on_negative_values(mul_sat(diff * scale, m)), kAccumulationBits);
    }
    const int32_t headroom = count_leading_zeros(static_cast<uint32_t>(sum));
    const uint32_t normalized = sum > 0 ? static_cast<uint32_t>(sum) << headroom : 0u;
    const int32_t reciprocal = one_over_one_plus_x(static_cast<int32_t>(normalized - 0x80000000u));
    const int32_t bits = kAccumulationBits - headroom + 23;
    const int32_t bits_over_unit = bits > 31 ? 31 : bits;
    for (int32_t i = 0; i < row; ++i) {
      const int32_t diff = x[i] - max;
      if (diff < floor) {
        y[i] = -128;
        continue;
      }
      const int32_t e = exp_on_negative_values(mul_sat(diff * scale, m));
      const int32_t v = divide_by_power_of_two(mul_sat(reciprocal, e), bits_over_unit) - 128;
      y[i] = static_cast<int8_t>(clamp(v, -128, 127));
    }
  }
}

}  // namespace cortex_m
}  // namespace kiln
