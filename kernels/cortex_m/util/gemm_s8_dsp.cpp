// gemm_s8 (gemm_s8.h) with the DSP extension. SMLAD multiplies two int16 pairs and adds
// both products, two MACs per instruction; int8 operands become int16 pairs with SXTB16,
// which takes bytes 0 and 2 (or, of the word rotated by 8, bytes 1 and 3), so a word of
// four int8 becomes the pairs (x0, x2) and (x1, x3), and two SMLAD of a row's pairs with a
// column's pairs add its four products.
//
// Rows go two at a time, widened once into scratch memory in that pairing and interleaved
// (per 4 of depth: row 0's two words, row 1's two words), so that one LDM-able run of four
// words feeds every column; columns go two at a time and are widened as they are read.
// Per 4 of depth: 4 row words, 2 column words and their 4 SXTB16, 8 SMLAD: 18
// instructions for 16 MACs. A single row (the odd last one, fully connected layers)
// widens its word once per 4 of depth for four columns: 3 + 4 x 5 per 16 MACs.
// Requantization is scalar, once per output (requantize_dsp.h).
#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/gemm_s8.h"

#if defined(KILN_CM_DSP)
#include "kernels/cortex_m/util/requantize_dsp.h"

namespace kiln {
namespace cortex_m {
namespace {

inline int32_t round4(int32_t n) { return (n + 3) & ~3; }

/// Four int8 of `p`, the ones past `n` (< 4) as zero: the tail of a row or column,
/// never read past its end.
inline uint32_t load_tail(const int8_t* p, int32_t n) {
  uint32_t w = 0;
  for (int32_t i = 0; i < n; ++i) w |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return w;
}

/// Rows a0 and a1 widened and interleaved into `out`: per 4 of depth, (x0, x2) and
/// (x1, x3) of row 0, then of row 1; zeros past the depth.
KILN_CM_HOT void widen_pair(const int8_t* a0, const int8_t* a1, int32_t depth, uint32_t* out) {
  int32_t i = 0;
  for (; i + 4 <= depth; i += 4, out += 4) {
    const uint32_t w0 = dsp_load_word(a0 + i), w1 = dsp_load_word(a1 + i);
    out[0] = __sxtb16(w0);
    out[1] = dsp_sxtb16_odd((w0));
    out[2] = __sxtb16(w1);
    out[3] = dsp_sxtb16_odd((w1));
  }
  if (i < depth) {
    const uint32_t w0 = load_tail(a0 + i, depth - i), w1 = load_tail(a1 + i, depth - i);
    out[0] = __sxtb16(w0);
    out[1] = dsp_sxtb16_odd((w0));
    out[2] = __sxtb16(w1);
    out[3] = dsp_sxtb16_odd((w1));
  }
}

/// The output stage of column c: requantize_fast (requantize_dsp.h) when the columns allow
/// it (right shifts only; a product's accumulator stays below 2^30 for any depth under
/// 2^15 with int32 terms of at most 2^29, checked by the caller), requantize otherwise.
template <bool kFast>
__attribute__((always_inline)) inline int8_t output(int32_t acc, const GemmColumns& k, int32_t c) {
  int32_t y;
  if (kFast) {
    const int32_t right = -k.neg_right[c];
    y = requantize_fast(acc, FastRequant{k.multiplier[c], right, 1 << (right - 1)});
  } else {
    y = requantize(acc, k.multiplier[c], k.shift[c]);
  }
  return static_cast<int8_t>(clamp(y + k.output_offset, k.activation_min, k.activation_max));
}

/// Whether every column of `k` takes requantize_fast for accumulators of `depth` products.
bool fast_output(const GemmColumns& k) {
  if (!k.right_shifts_only || k.depth >= (1 << 15)) return false;
  for (int32_t c = 0; c < k.cols; ++c) {
    if (k.terms[c] > (1 << 29) || k.terms[c] < -(1 << 29)) return false;
  }
  return true;
}

struct Dots2x2 {
  int32_t s00, s01, s10, s11;
};

/// s0 and s1 plus the dot products of the two widened rows at `rows` with the column at
/// `b`, over 8 * `pairs` of depth. Assembly, eight of depth per iteration: per 4 of depth
/// one LDR of the column, two SXTB16, one LDRD of each row's two words and four SMLAD
/// (9 instructions for 8 MACs), and a SUBS and BNE per iteration: 20 instructions per 16
/// MACs, where the C loop it replaces read the four row words with four LDR for each
/// column (22 per 16 MACs, and its loop step per 4 of depth). Eleven registers, so nothing
/// spills. The rows are word-aligned scratch memory (LDRD needs it); the column may be
/// unaligned (LDR takes that on the M4/M33).
__attribute__((always_inline)) inline void dots_2x1(const uint32_t* rows, const int8_t* b, int32_t pairs, int32_t* s0,
                                                    int32_t* s1) {
  if (pairs <= 0) return;
  int32_t a0 = *s0, a1 = *s1;
  uint32_t w, e, x0, x1;
#define KILN_DSP_GROUP                                   \
  "ldr    %[w], [%[b]], #4\n\t"                          \
  "ldrd   %[x0], %[x1], [%[r]], #8\n\t"                  \
  "sxtb16 %[e], %[w]\n\t"                                \
  "sxtb16 %[w], %[w], ror #8\n\t"                        \
  "smlad  %[a0], %[x0], %[e], %[a0]\n\t"                 \
  "smlad  %[a0], %[x1], %[w], %[a0]\n\t"                 \
  "ldrd   %[x0], %[x1], [%[r]], #8\n\t"                  \
  "smlad  %[a1], %[x0], %[e], %[a1]\n\t"                 \
  "smlad  %[a1], %[x1], %[w], %[a1]\n\t"
  __asm__("1:\n\t" KILN_DSP_GROUP KILN_DSP_GROUP
          "subs   %[n], %[n], #1\n\t"
          "bne    1b\n\t"
          : [a0] "+r"(a0), [a1] "+r"(a1), [r] "+r"(rows), [b] "+r"(b), [n] "+r"(pairs), [w] "=&r"(w), [e] "=&r"(e),
            [x0] "=&r"(x0), [x1] "=&r"(x1)
          :
          : "cc", "memory");
#undef KILN_DSP_GROUP
  *s0 = a0;
  *s1 = a1;
}

/// The dot products of two widened rows with the columns b0 and b1: each column's first
/// 8 * (depth / 8) of depth by dots_2x1, the rest here.
KILN_CM_HOT inline Dots2x2 dots_2x2(const uint32_t* rows, const int8_t* b0, const int8_t* b1, int32_t depth) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  const int32_t pairs = depth / 8;
  dots_2x1(rows, b0, pairs, &s00, &s10);
  dots_2x1(rows, b1, pairs, &s01, &s11);
  int32_t i = 8 * pairs;
  rows += 8 * pairs;
  for (; i + 4 <= depth; i += 4, rows += 4) {
    uint32_t w = dsp_load_word(b0 + i);
    uint32_t we = __sxtb16(w), wo = dsp_sxtb16_odd(w);
    s00 = __smlad(rows[0], we, __smlad(rows[1], wo, s00));
    s10 = __smlad(rows[2], we, __smlad(rows[3], wo, s10));
    w = dsp_load_word(b1 + i);
    we = __sxtb16(w);
    wo = dsp_sxtb16_odd(w);
    s01 = __smlad(rows[0], we, __smlad(rows[1], wo, s01));
    s11 = __smlad(rows[2], we, __smlad(rows[3], wo, s11));
  }
  if (i < depth) {
    uint32_t w = load_tail(b0 + i, depth - i);
    uint32_t we = __sxtb16(w), wo = dsp_sxtb16_odd(w);
    s00 = __smlad(rows[0], we, __smlad(rows[1], wo, s00));
    s10 = __smlad(rows[2], we, __smlad(rows[3], wo, s10));
    w = load_tail(b1 + i, depth - i);
    we = __sxtb16(w);
    wo = dsp_sxtb16_odd(w);
    s01 = __smlad(rows[0], we, __smlad(rows[1], wo, s01));
    s11 = __smlad(rows[2], we, __smlad(rows[3], wo, s11));
  }
  return {s00, s01, s10, s11};
}

/// The dot products of one row (int8, widened as read; kOffset: plus `offset` in each
/// int16 lane, SADD16, which a fully connected layer with a bias and no kernel sums needs)
/// with four columns.
template <bool kOffset>
KILN_CM_HOT void dots_1x4(const int8_t* a, const int8_t* b0, const int8_t* b1, const int8_t* b2, const int8_t* b3,
                          int32_t depth, int32_t offset, int32_t s[4]) {
  const uint32_t offset_pair = (static_cast<uint32_t>(offset) & 0xFFFFu) * 0x00010001u;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int32_t i = 0;
  for (; i + 4 <= depth; i += 4) {
    const uint32_t x = dsp_load_word(a + i);
    uint32_t xe = __sxtb16(x), xo = dsp_sxtb16_odd((x));
    if (kOffset) {
      xe = __sadd16(xe, offset_pair);
      xo = __sadd16(xo, offset_pair);
    }
    uint32_t w = dsp_load_word(b0 + i);
    s0 = __smlad(xe, __sxtb16(w), __smlad(xo, dsp_sxtb16_odd((w)), s0));
    w = dsp_load_word(b1 + i);
    s1 = __smlad(xe, __sxtb16(w), __smlad(xo, dsp_sxtb16_odd((w)), s1));
    w = dsp_load_word(b2 + i);
    s2 = __smlad(xe, __sxtb16(w), __smlad(xo, dsp_sxtb16_odd((w)), s2));
    w = dsp_load_word(b3 + i);
    s3 = __smlad(xe, __sxtb16(w), __smlad(xo, dsp_sxtb16_odd((w)), s3));
  }
  for (; i < depth; ++i) {
    const int32_t x = a[i] + (kOffset ? offset : 0);
    s0 += x * b0[i];
    s1 += x * b1[i];
    s2 += x * b2[i];
    s3 += x * b3[i];
  }
  s[0] = s0;
  s[1] = s1;
  s[2] = s2;
  s[3] = s3;
}

/// One row against columns [0, cols) of `b`: each output from its dot product plus
/// terms[c] (if any) and row_term, through output_of(acc, c).
template <bool kOffset, typename Output>
KILN_CM_HOT void one_row(const int8_t* a, const int8_t* b, int32_t cols, int32_t depth, int32_t offset,
                         const int32_t* terms, int32_t row_term, int8_t* out, Output output_of) {
  for (int32_t c = 0; c < cols; c += 4) {
    const int32_t n = cols - c < 4 ? cols - c : 4;
    const int8_t* b0 = b + static_cast<int64_t>(c) * depth;
    const int8_t* b1 = n > 1 ? b0 + depth : b0;
    const int8_t* b2 = n > 2 ? b1 + depth : b1;
    const int8_t* b3 = n > 3 ? b2 + depth : b2;
    int32_t s[4];
    dots_1x4<kOffset>(a, b0, b1, b2, b3, depth, offset, s);
    for (int32_t j = 0; j < n; ++j) out[c + j] = output_of(s[j] + (terms != nullptr ? terms[c + j] : 0) + row_term, c + j);
  }
}

/// The output stage with one multiplier and shift.
struct PerTensorOutput {
  const OutputStage* stage;
  int8_t operator()(int32_t acc, int32_t /*c*/) const {
    const int32_t y = requantize(acc, stage->multiplier[0], stage->shift[0]) + stage->output_offset;
    return static_cast<int8_t>(clamp(y, stage->activation_min, stage->activation_max));
  }
};

}  // namespace

KILN_CM_HOT int32_t sum_s8(const int8_t* x, int32_t n) {
  int32_t sum = 0;
  int32_t i = 0;
  // SXTAB16 adds bytes 0/2 and 1/3 sign-extended into two halfword sums; SMUAD by
  // 0x00010001 then adds the halves.
  for (; i + 4 <= n; i += 4) {
    const uint32_t w = dsp_load_word(x + i);
    sum += __smuad(__sxtab16(__sxtb16(w), dsp_ror8(w)), 0x00010001u);
  }
  for (; i < n; ++i) sum += x[i];
  return sum;
}

// Two widened rows of round4(depth) int16 each (widen_pair: four words per 4 of depth), the
// same rule as the compiler's conv_scratch_bytes. (It asked for twice that before, so a
// program sized by that rule never got the two-row path.)
size_t gemm_scratch_bytes(int32_t depth) { return 2 * static_cast<size_t>(round4(depth)) * sizeof(int16_t); }

template <bool kFast>
KILN_CM_HOT void gemm_rows(const int8_t* a, int32_t rows, int32_t a_row_stride, const GemmColumns& k,
                           int32_t b_offset, int8_t* out, int32_t out_row_stride, int8_t* scratch) {
  const auto output_of = [&k](int32_t acc, int32_t c) { return output<kFast>(acc, k, c); };
  int32_t r = 0;
  if (scratch != nullptr && reinterpret_cast<uintptr_t>(scratch) % 4 == 0) {
    uint32_t* widened = reinterpret_cast<uint32_t*>(scratch);
    for (; r + 2 <= rows; r += 2) {
      const int8_t* a0 = a + static_cast<int64_t>(r) * a_row_stride;
      const int8_t* a1 = a0 + a_row_stride;
      widen_pair(a0, a1, k.depth, widened);
      const int32_t t0 = b_offset != 0 ? b_offset * sum_s8(a0, k.depth) : 0;
      const int32_t t1 = b_offset != 0 ? b_offset * sum_s8(a1, k.depth) : 0;
      int8_t* o0 = out + static_cast<int64_t>(r) * out_row_stride;
      int8_t* o1 = o0 + out_row_stride;
      for (int32_t c = 0; c < k.cols; c += 2) {
        const int8_t* b0 = k.b + static_cast<int64_t>(c) * k.depth;
        const bool two = c + 1 < k.cols;
        const Dots2x2 d = dots_2x2(widened, b0, two ? b0 + k.depth : b0, k.depth);
        o0[c] = output<kFast>(d.s00 + k.terms[c] + t0, k, c);
        o1[c] = output<kFast>(d.s10 + k.terms[c] + t1, k, c);
        if (two) {
          o0[c + 1] = output<kFast>(d.s01 + k.terms[c + 1] + t0, k, c + 1);
          o1[c + 1] = output<kFast>(d.s11 + k.terms[c + 1] + t1, k, c + 1);
        }
      }
    }
  }
  for (; r < rows; ++r) {
    const int8_t* row = a + static_cast<int64_t>(r) * a_row_stride;
    one_row<false>(row, k.b, k.cols, k.depth, 0, k.terms, b_offset != 0 ? b_offset * sum_s8(row, k.depth) : 0,
                   out + static_cast<int64_t>(r) * out_row_stride, output_of);
  }
}

void gemm_s8(const int8_t* a, int32_t rows, int32_t a_row_stride, const GemmColumns& k, int32_t b_offset,
             int8_t* out, int32_t out_row_stride, int8_t* scratch) {
  // The fast output stage also needs b_offset's row terms small: only with b_offset 0.
  if (b_offset == 0 && fast_output(k)) {
    gemm_rows<true>(a, rows, a_row_stride, k, b_offset, out, out_row_stride, scratch);
  } else {
    gemm_rows<false>(a, rows, a_row_stride, k, b_offset, out, out_row_stride, scratch);
  }
}

void gemm_s8_row_with_terms(const int8_t* a, const int8_t* b, int32_t cols, int32_t depth, const int32_t* terms,
                            int32_t row_term, const OutputStage& stage, int8_t* out) {
  one_row<false>(a, b, cols, depth, 0, terms, row_term, out, PerTensorOutput{&stage});
}

// The input offset rides on the widened row (int16 holds x + offset), so the columns'
// sums are never needed.
void gemm_s8_row_with_bias(const int8_t* a, const int8_t* b, int32_t cols, int32_t depth, const int32_t* bias,
                           int32_t a_offset, const OutputStage& stage, int8_t* out) {
  if (stage.stride != 0) {
    GemmColumns k;
    for (int32_t c0 = 0; c0 < cols; c0 += kGemmColumnChunk) {
      const int32_t n = cols - c0 < kGemmColumnChunk ? cols - c0 : kGemmColumnChunk;
      const OutputStage at{stage.multiplier + c0, stage.shift + c0, 1, stage.output_offset, stage.activation_min,
                           stage.activation_max};
      gemm_prepare_columns(b + static_cast<int64_t>(c0) * depth, n, depth, bias != nullptr ? bias + c0 : nullptr,
                           nullptr, a_offset, 0, at, &k);
      gemm_s8(a, 1, depth, k, 0, out + c0, n, nullptr);
    }
    return;
  }
  one_row<true>(a, b, cols, depth, a_offset, bias, 0, out, PerTensorOutput{&stage});
}

}  // namespace cortex_m
}  // namespace kiln
#endif
