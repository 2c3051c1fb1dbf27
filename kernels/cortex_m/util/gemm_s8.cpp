// gemm_s8 in the three flavours: rows are taken four at a time so that each load of a
// filter row feeds four dot products; the output stage runs on the four accumulators
// of one column together (one multiplier and shift).
#include "kernels/cortex_m/util/gemm_s8.h"

#include <cstring>

#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {
namespace {

#if defined(KILN_CM_MVE)

KILN_CM_HOT int32_t sum_s8(const int8_t* x, int32_t n) {
  int32_t sum = 0;
  for (int32_t i = 0; i < n; i += 16) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n - i));
    sum = vaddvaq_p_s8(sum, vldrbq_z_s8(x + i, p), p);
  }
  return sum;
}

KILN_CM_HOT void dot_4x1(const int8_t* a, int32_t stride, const int8_t* b, int32_t k, int32_t acc[4]) {
  const int8_t* a0 = a;
  const int8_t* a1 = a + stride;
  const int8_t* a2 = a + 2 * stride;
  const int8_t* a3 = a + 3 * stride;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int32_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const int8x16_t w = vldrbq_s8(b + i);
    s0 = vmladavaq_s8(s0, vldrbq_s8(a0 + i), w);
    s1 = vmladavaq_s8(s1, vldrbq_s8(a1 + i), w);
    s2 = vmladavaq_s8(s2, vldrbq_s8(a2 + i), w);
    s3 = vmladavaq_s8(s3, vldrbq_s8(a3 + i), w);
  }
  if (i < k) {
    // Inactive lanes load as zero and touch no memory.
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(k - i));
    const int8x16_t w = vldrbq_z_s8(b + i, p);
    s0 = vmladavaq_s8(s0, vldrbq_z_s8(a0 + i, p), w);
    s1 = vmladavaq_s8(s1, vldrbq_z_s8(a1 + i, p), w);
    s2 = vmladavaq_s8(s2, vldrbq_z_s8(a2 + i, p), w);
    s3 = vmladavaq_s8(s3, vldrbq_z_s8(a3 + i, p), w);
  }
  acc[0] = s0;
  acc[1] = s1;
  acc[2] = s2;
  acc[3] = s3;
}

KILN_CM_HOT int32_t dot_1x1(const int8_t* a, const int8_t* b, int32_t k) {
  int32_t s = 0;
  int32_t i = 0;
  for (; i + 16 <= k; i += 16) s = vmladavaq_s8(s, vldrbq_s8(a + i), vldrbq_s8(b + i));
  if (i < k) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(k - i));
    s = vmladavaq_s8(s, vldrbq_z_s8(a + i, p), vldrbq_z_s8(b + i, p));
  }
  return s;
}

// Requantizes four accumulators of one column and stores them a row stride apart.
KILN_CM_HOT void store_4x1(const int32_t acc[4], int32_t multiplier, int32_t shift, const OutputStage& s,
                           int8_t* out, int32_t out_row_stride) {
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  int32x4_t x = vldrwq_s32(acc);
  x = vshlq_s32(x, vdupq_n_s32(left));
  x = vqrdmulhq_n_s32(x, multiplier);
  // Rounding right shift with ties away from zero: negative values first step down by
  // one, then vrshl rounds half up.
  const int32x4_t neg_right = vdupq_n_s32(-right);
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, neg_right), 31);
  x = vrshlq_s32(vqaddq_s32(x, fixup), neg_right);
  x = vaddq_n_s32(x, s.output_offset);
  x = vmaxq_s32(x, vdupq_n_s32(s.activation_min));
  x = vminq_s32(x, vdupq_n_s32(s.activation_max));
  const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), static_cast<uint32_t>(out_row_stride));
  vstrbq_scatter_offset_s32(out, offsets, x);
}

#elif defined(KILN_CM_DSP)

KILN_CM_HOT int32_t sum_s8(const int8_t* x, int32_t n) {
  int32_t sum = 0;
  int32_t i = 0;
  // SXTAB16 adds bytes 0/2 and 1/3 sign-extended into two halfword sums; SMUAD by
  // 0x00010001 then adds the halves.
  for (; i + 4 <= n; i += 4) {
    const uint32_t w = dsp_load_word(x + i);
    const uint32_t pairs = __sxtab16(__sxtb16(w), dsp_ror8(w));
    sum += __smuad(pairs, 0x00010001u);
  }
  for (; i < n; ++i) sum += x[i];
  return sum;
}

KILN_CM_HOT void dot_4x1(const int8_t* a, int32_t stride, const int8_t* b, int32_t k, int32_t acc[4]) {
  const int8_t* rows[4] = {a, a + stride, a + 2 * stride, a + 3 * stride};
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int32_t i = 0;
  for (; i + 4 <= k; i += 4) {
    const uint32_t w = dsp_load_word(b + i);
    const uint32_t w02 = __sxtb16(w);
    const uint32_t w13 = __sxtb16(dsp_ror8(w));
    uint32_t x = dsp_load_word(rows[0] + i);
    s0 = __smlad(__sxtb16(x), w02, s0);
    s0 = __smlad(__sxtb16(dsp_ror8(x)), w13, s0);
    x = dsp_load_word(rows[1] + i);
    s1 = __smlad(__sxtb16(x), w02, s1);
    s1 = __smlad(__sxtb16(dsp_ror8(x)), w13, s1);
    x = dsp_load_word(rows[2] + i);
    s2 = __smlad(__sxtb16(x), w02, s2);
    s2 = __smlad(__sxtb16(dsp_ror8(x)), w13, s2);
    x = dsp_load_word(rows[3] + i);
    s3 = __smlad(__sxtb16(x), w02, s3);
    s3 = __smlad(__sxtb16(dsp_ror8(x)), w13, s3);
  }
  for (; i < k; ++i) {
    const int32_t w = b[i];
    s0 += rows[0][i] * w;
    s1 += rows[1][i] * w;
    s2 += rows[2][i] * w;
    s3 += rows[3][i] * w;
  }
  acc[0] = s0;
  acc[1] = s1;
  acc[2] = s2;
  acc[3] = s3;
}

KILN_CM_HOT int32_t dot_1x1(const int8_t* a, const int8_t* b, int32_t k) {
  int32_t s = 0;
  int32_t i = 0;
  for (; i + 4 <= k; i += 4) {
    const uint32_t w = dsp_load_word(b + i);
    const uint32_t x = dsp_load_word(a + i);
    s = __smlad(__sxtb16(x), __sxtb16(w), s);
    s = __smlad(__sxtb16(dsp_ror8(x)), __sxtb16(dsp_ror8(w)), s);
  }
  for (; i < k; ++i) s += a[i] * b[i];
  return s;
}

#else  // portable

int32_t sum_s8(const int8_t* x, int32_t n) {
  int32_t sum = 0;
  for (int32_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

KILN_CM_HOT void dot_4x1(const int8_t* a, int32_t stride, const int8_t* b, int32_t k, int32_t acc[4]) {
  const int8_t* a0 = a;
  const int8_t* a1 = a + stride;
  const int8_t* a2 = a + 2 * stride;
  const int8_t* a3 = a + 3 * stride;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int32_t i = 0; i < k; ++i) {
    const int32_t w = b[i];
    s0 += a0[i] * w;
    s1 += a1[i] * w;
    s2 += a2[i] * w;
    s3 += a3[i] * w;
  }
  acc[0] = s0;
  acc[1] = s1;
  acc[2] = s2;
  acc[3] = s3;
}

KILN_CM_HOT int32_t dot_1x1(const int8_t* a, const int8_t* b, int32_t k) {
  int32_t s = 0;
  for (int32_t i = 0; i < k; ++i) s += a[i] * b[i];
  return s;
}

#endif

#if !defined(KILN_CM_MVE)
void store_4x1(const int32_t acc[4], int32_t multiplier, int32_t shift, const OutputStage& s,
               int8_t* out, int32_t out_row_stride) {
  for (int32_t r = 0; r < 4; ++r) {
    const int32_t y = requantize(acc[r], multiplier, shift) + s.output_offset;
    out[r * out_row_stride] = static_cast<int8_t>(clamp(y, s.activation_min, s.activation_max));
  }
}
#endif

inline int8_t output_value(int32_t acc, int32_t multiplier, int32_t shift, const OutputStage& s) {
  const int32_t y = requantize(acc, multiplier, shift) + s.output_offset;
  return static_cast<int8_t>(clamp(y, s.activation_min, s.activation_max));
}

}  // namespace

void gemm_column_terms(const int8_t* b, int32_t cols, int32_t depth, const int32_t* bias,
                       const int32_t* kernel_sum, int32_t a_offset, int32_t b_offset,
                       int32_t* terms) {
  for (int32_t c = 0; c < cols; ++c) {
    if (kernel_sum != nullptr) {
      terms[c] = kernel_sum[c];
      continue;
    }
    int32_t t = bias != nullptr ? bias[c] : 0;
    if (a_offset != 0) t += a_offset * sum_s8(b + static_cast<int64_t>(c) * depth, depth);
    terms[c] = t + a_offset * b_offset * depth;
  }
}

KILN_CM_HOT void gemm_s8(const int8_t* a, int32_t rows, int32_t a_row_stride, const int8_t* b,
                         int32_t cols, int32_t depth, const int32_t* terms, int32_t b_offset,
                         const OutputStage& stage, int8_t* out, int32_t out_row_stride) {
  int32_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const int8_t* a_block = a + static_cast<int64_t>(r) * a_row_stride;
    int32_t row_terms[4] = {0, 0, 0, 0};
    if (b_offset != 0) {
      for (int32_t i = 0; i < 4; ++i) row_terms[i] = b_offset * sum_s8(a_block + i * a_row_stride, depth);
    }
    int8_t* out_block = out + static_cast<int64_t>(r) * out_row_stride;
    for (int32_t c = 0; c < cols; ++c) {
      int32_t acc[4];
      dot_4x1(a_block, a_row_stride, b + static_cast<int64_t>(c) * depth, depth, acc);
      for (int32_t i = 0; i < 4; ++i) acc[i] += terms[c] + row_terms[i];
      store_4x1(acc, stage.multiplier[c * stage.stride], stage.shift[c * stage.stride], stage,
                out_block + c, out_row_stride);
    }
  }
  for (; r < rows; ++r) {
    const int8_t* a_row = a + static_cast<int64_t>(r) * a_row_stride;
    const int32_t row_term = b_offset != 0 ? b_offset * sum_s8(a_row, depth) : 0;
    int8_t* out_row = out + static_cast<int64_t>(r) * out_row_stride;
    for (int32_t c = 0; c < cols; ++c) {
      const int32_t acc = dot_1x1(a_row, b + static_cast<int64_t>(c) * depth, depth) + terms[c] + row_term;
      out_row[c] = output_value(acc, stage.multiplier[c * stage.stride], stage.shift[c * stage.stride], stage);
    }
  }
}

}  // namespace cortex_m
}  // namespace kiln
