// gemm_s8 (gemm_s8.h) with Helium. VMLADAVA multiplies sixteen int8 pairs and adds them
// to a 32-bit accumulator in one instruction, so the products cost one instruction per 16
// MACs; what decides the speed is how many loads feed each of them and whether every
// value the loop needs stays in a register. VMLADAVA accumulates only into even-numbered
// registers (r0-r12 and lr, which the low-overhead loop takes).
//
// Rows go three at a time, interleaved chunk by chunk into scratch memory ([chunk][row][16],
// zeros past the depth), so that one post-incremented pointer reads all three; columns go
// two at a time from where they are, a pointer each. Per 16 of depth: 3 row loads, 2
// column loads, 6 VMLADAVA (96 MACs) and the loop's LE, 12 instructions (0.125 per MAC),
// in 6 accumulators, 3 pointers and lr: GCC keeps the rest of the block in the other
// registers. A depth of 16 or less (a shallow pointwise convolution) loads the three rows
// once and has no loop.
//
// The output stage of a block takes each column's three accumulators (its three rows) as
// one vector, gathered by two dual-lane VMOVs, requantizes them with the column's scalar
// parameters (VQRDMULH and VRSHL by a general-purpose register) and scatters the three
// bytes to their rows. A row left over (and a fully connected layer, one row) takes four
// columns at a time against the row: 1 + 4 loads and 4 VMLADAVA per 64 MACs.
#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/gemm_s8.h"

#if defined(KILN_CM_MVE)
#include "kernels/cortex_m/util/requantize_mve.h"

namespace kiln {
namespace cortex_m {
namespace {

constexpr int32_t kChunk = 16;
constexpr int32_t kRows = 3;

/// {a, b, c, d} in one vector: two VMOVs that each write two lanes from two registers
/// (GCC 12 writes one lane per instruction).
__attribute__((always_inline)) inline int32x4_t lanes(int32_t a, int32_t b, int32_t c, int32_t d) {
  int32x4_t v;
  __asm__("vmov %q0[2], %q0[0], %1, %2\n\tvmov %q0[3], %q0[1], %3, %4" : "=w"(v) : "r"(a), "r"(c), "r"(b), "r"(d));
  return v;
}

/// Copies three rows (`a`, a + stride, a + 2 * stride) into `rows` chunk by chunk, zeros
/// past the depth.
KILN_CM_HOT void interleave3(const int8_t* a, int32_t stride, int32_t depth, int8_t* rows) {
  const int8_t* a1 = a + stride;
  const int8_t* a2 = a1 + stride;
  int32_t i = 0;
  for (; i + kChunk <= depth; i += kChunk, rows += kRows * kChunk) {
    vstrbq_s8(rows, vldrbq_s8(a + i));
    vstrbq_s8(rows + kChunk, vldrbq_s8(a1 + i));
    vstrbq_s8(rows + 2 * kChunk, vldrbq_s8(a2 + i));
  }
  if (i < depth) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(depth - i));
    vstrbq_s8(rows, vldrbq_z_s8(a + i, p));
    vstrbq_s8(rows + kChunk, vldrbq_z_s8(a1 + i, p));
    vstrbq_s8(rows + 2 * kChunk, vldrbq_z_s8(a2 + i, p));
  }
}

/// requantize() of one column's lanes (its rows) with the column's scalar parameters.
template <ShiftKind kKind>
__attribute__((always_inline)) inline int32x4_t requantize_column(int32x4_t x, const GemmColumns& k, int32_t c) {
  if (kKind == ShiftKind::kAny) {
    const int32_t neg_right = k.neg_right[c];
    x = vqrdmulhq_n_s32(vshlq_r_s32(x, k.left[c]), k.multiplier[c]);
    return vrshlq_n_s32(vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, vdupq_n_s32(neg_right)), 31)), neg_right);
  }
  x = vqrdmulhq_n_s32(x, k.multiplier[c]);
  return vrshlq_n_s32(vqaddq_s32(x, vshrq_n_s32(x, 31)), k.neg_right[c]);
}

/// The output stage of column c for three rows: `acc` holds their dot products in lanes
/// 0-2 and row 2's again in lane 3, `row_terms` each row's b_offset term (kRowTerms);
/// `offsets` are the rows' byte offsets, row 2's twice: lane 3 stores lane 2's byte again,
/// which spares the store a predicate.
template <ShiftKind kKind, bool kRowTerms>
__attribute__((always_inline)) inline void store_column(int32x4_t acc, int32x4_t row_terms, const GemmColumns& k,
                                                        int32_t c, int32x4_t lo, int32x4_t hi, uint32x4_t offsets,
                                                        int8_t* out) {
  int32x4_t x = vaddq_n_s32(kRowTerms ? vaddq_s32(acc, row_terms) : acc, k.terms[c]);
  x = requantize_column<kKind>(x, k, c);
  x = vminq_s32(vmaxq_s32(vaddq_n_s32(x, k.output_offset), lo), hi);
  vstrbq_scatter_offset_s32(out + c, offsets, x);
}

/// The dot products of three interleaved rows with two columns (b0, b1): each column's
/// three as lanes 0-2 of *col0, *col1 (and row 2's again in lane 3). kShallow: depth <= 16
/// and the rows' vectors come from the caller (x0-x2): no loop, the columns read with a
/// predicate that stops at the depth. Otherwise depth >= 16, and kTail: depth % 16 != 0.
template <bool kShallow, bool kTail>
__attribute__((always_inline)) inline void dots_3x2(const int8_t* rows, int8x16_t x0, int8x16_t x1, int8x16_t x2,
                                                    const int8_t* b0, const int8_t* b1, int32_t depth,
                                                    int32x4_t* col0, int32x4_t* col1) {
  if (kShallow) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(depth));
    int8x16_t w = vldrbq_z_s8(b0, p);
    const int32_t s00 = vmladavq_s8(x0, w), s10 = vmladavq_s8(x1, w), s20 = vmladavq_s8(x2, w);
    w = vldrbq_z_s8(b1, p);
    const int32_t s01 = vmladavq_s8(x0, w), s11 = vmladavq_s8(x1, w), s21 = vmladavq_s8(x2, w);
    *col0 = lanes(s00, s10, s20, s20);
    *col1 = lanes(s01, s11, s21, s21);
    return;
  }
  // The first chunk starts the accumulators (VMLADAV), which spares zeroing six registers.
  x0 = vldrbq_s8(rows);
  x1 = vldrbq_s8(rows + kChunk);
  x2 = vldrbq_s8(rows + 2 * kChunk);
  rows += kRows * kChunk;
  int8x16_t w = vldrbq_s8(b0);
  b0 += kChunk;
  int32_t s00 = vmladavq_s8(x0, w), s10 = vmladavq_s8(x1, w), s20 = vmladavq_s8(x2, w);
  w = vldrbq_s8(b1);
  b1 += kChunk;
  int32_t s01 = vmladavq_s8(x0, w), s11 = vmladavq_s8(x1, w), s21 = vmladavq_s8(x2, w);
  for (int32_t n = depth / kChunk - 1; n > 0; --n) {
    x0 = vldrbq_s8(rows);
    x1 = vldrbq_s8(rows + kChunk);
    x2 = vldrbq_s8(rows + 2 * kChunk);
    rows += kRows * kChunk;
    w = vldrbq_s8(b0);
    b0 += kChunk;
    s00 = vmladavaq_s8(s00, x0, w);
    s10 = vmladavaq_s8(s10, x1, w);
    s20 = vmladavaq_s8(s20, x2, w);
    w = vldrbq_s8(b1);
    b1 += kChunk;
    s01 = vmladavaq_s8(s01, x0, w);
    s11 = vmladavaq_s8(s11, x1, w);
    s21 = vmladavaq_s8(s21, x2, w);
  }
  if (kTail) {
    // The rows are zero past the depth; the columns' loads must stop at it.
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(depth % kChunk));
    x0 = vldrbq_s8(rows);
    x1 = vldrbq_s8(rows + kChunk);
    x2 = vldrbq_s8(rows + 2 * kChunk);
    w = vldrbq_z_s8(b0, p);
    s00 = vmladavaq_s8(s00, x0, w);
    s10 = vmladavaq_s8(s10, x1, w);
    s20 = vmladavaq_s8(s20, x2, w);
    w = vldrbq_z_s8(b1, p);
    s01 = vmladavaq_s8(s01, x0, w);
    s11 = vmladavaq_s8(s11, x1, w);
    s21 = vmladavaq_s8(s21, x2, w);
  }
  *col0 = lanes(s00, s10, s20, s20);
  *col1 = lanes(s01, s11, s21, s21);
}

/// Three rows (interleaved in `rows`) against every column, two columns a block; an odd
/// last column pairs with itself and stores once.
template <ShiftKind kKind, bool kShallow, bool kTail, bool kRowTerms>
KILN_CM_HOT void three_rows(const int8_t* rows, const GemmColumns& k, int32x4_t row_terms, int32_t out_row_stride,
                            int8_t* out) {
  const int32_t depth = k.depth;
  const int8x16_t x0 = vldrbq_s8(rows), x1 = vldrbq_s8(rows + kChunk), x2 = vldrbq_s8(rows + 2 * kChunk);
  const int32x4_t lo = vdupq_n_s32(k.activation_min), hi = vdupq_n_s32(k.activation_max);
  const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), static_cast<uint32_t>(out_row_stride));
  const uint32x4_t offsets3 = vsetq_lane_u32(2 * static_cast<uint32_t>(out_row_stride), offsets, 3);
  const int8_t* b = k.b;
  int32_t c = 0;
  for (; c + 2 <= k.cols; c += 2, b += 2 * depth) {
    int32x4_t col0, col1;
    dots_3x2<kShallow, kTail>(rows, x0, x1, x2, b, b + depth, depth, &col0, &col1);
    store_column<kKind, kRowTerms>(col0, row_terms, k, c, lo, hi, offsets3, out);
    store_column<kKind, kRowTerms>(col1, row_terms, k, c + 1, lo, hi, offsets3, out);
  }
  if (c < k.cols) {
    int32x4_t col0, col1;
    dots_3x2<kShallow, kTail>(rows, x0, x1, x2, b, b, depth, &col0, &col1);
    store_column<kKind, kRowTerms>(col0, row_terms, k, c, lo, hi, offsets3, out);
  }
}

template <ShiftKind kKind, bool kRowTerms>
void three_rows_for_depth(const int8_t* rows, const GemmColumns& k, int32x4_t row_terms, int32_t out_row_stride,
                          int8_t* out) {
  if (k.depth <= kChunk) {
    three_rows<kKind, true, false, kRowTerms>(rows, k, row_terms, out_row_stride, out);
  } else if (k.depth % kChunk != 0) {
    three_rows<kKind, false, true, kRowTerms>(rows, k, row_terms, out_row_stride, out);
  } else {
    three_rows<kKind, false, false, kRowTerms>(rows, k, row_terms, out_row_stride, out);
  }
}

/// The dot products of one row with the four columns at b0..b3. Not inlined: in a function
/// of its own the loop's eleven registers (four accumulators, five pointers, the count and
/// lr) are all it holds, and nothing spills (10 instructions per 64 MACs).
__attribute__((noinline)) KILN_CM_HOT int32x4_t dots_1x4(const int8_t* a, const int8_t* b0, const int8_t* b1,
                                                         const int8_t* b2, const int8_t* b3, int32_t depth) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int32_t n = depth / kChunk; n > 0; --n) {
    const int8x16_t x = vldrbq_s8(a);
    a += kChunk;
    s0 = vmladavaq_s8(s0, x, vldrbq_s8(b0));
    b0 += kChunk;
    s1 = vmladavaq_s8(s1, x, vldrbq_s8(b1));
    b1 += kChunk;
    s2 = vmladavaq_s8(s2, x, vldrbq_s8(b2));
    b2 += kChunk;
    s3 = vmladavaq_s8(s3, x, vldrbq_s8(b3));
    b3 += kChunk;
  }
  if (depth % kChunk != 0) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(depth % kChunk));
    const int8x16_t x = vldrbq_z_s8(a, p);
    s0 = vmladavaq_s8(s0, x, vldrbq_z_s8(b0, p));
    s1 = vmladavaq_s8(s1, x, vldrbq_z_s8(b1, p));
    s2 = vmladavaq_s8(s2, x, vldrbq_z_s8(b2, p));
    s3 = vmladavaq_s8(s3, x, vldrbq_z_s8(b3, p));
  }
  return lanes(s0, s1, s2, s3);
}

/// The dot products of one row with five columns (b, b + depth, ..., b + 4 * depth) into
/// acc[0..5). Five because the loop then needs twelve registers: five accumulators, six
/// pointers and lr (12 instructions per 80 MACs, 0.15 per MAC); six would need fourteen,
/// which GCC cannot allocate without spilling. Not inlined, for the same reason; kTail
/// (depth % 16 != 0) a variant of its own, so that the common one keeps no pointer for it.
template <bool kTail>
__attribute__((noinline)) KILN_CM_HOT void dots_1x5(const int8_t* a, const int8_t* b0, int32_t depth,
                                                    int32_t* acc) {
  const int8_t* b1 = b0 + depth;
  const int8_t* b2 = b1 + depth;
  const int8_t* b3 = b2 + depth;
  const int8_t* b4 = b3 + depth;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  for (int32_t n = depth / kChunk; n > 0; --n) {
    const int8x16_t x = vldrbq_s8(a);
    a += kChunk;
    s0 = vmladavaq_s8(s0, x, vldrbq_s8(b0));
    b0 += kChunk;
    s1 = vmladavaq_s8(s1, x, vldrbq_s8(b1));
    b1 += kChunk;
    s2 = vmladavaq_s8(s2, x, vldrbq_s8(b2));
    b2 += kChunk;
    s3 = vmladavaq_s8(s3, x, vldrbq_s8(b3));
    b3 += kChunk;
    s4 = vmladavaq_s8(s4, x, vldrbq_s8(b4));
    b4 += kChunk;
  }
  if (kTail) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(depth % kChunk));
    const int8x16_t x = vldrbq_z_s8(a, p);
    s0 = vmladavaq_s8(s0, x, vldrbq_z_s8(b0, p));
    s1 = vmladavaq_s8(s1, x, vldrbq_z_s8(b1, p));
    s2 = vmladavaq_s8(s2, x, vldrbq_z_s8(b2, p));
    s3 = vmladavaq_s8(s3, x, vldrbq_z_s8(b3, p));
    s4 = vmladavaq_s8(s4, x, vldrbq_z_s8(b4, p));
  }
  acc[0] = s0;
  acc[1] = s1;
  acc[2] = s2;
  acc[3] = s3;
  acc[4] = s4;
}

/// One row against `cols` columns of `b` with per-column `terms` and one multiplier and
/// shift: the dot products five columns at a time into an int32 buffer, then the output
/// stage on it four lanes at a time with the parameters in registers.
template <ShiftKind kKind>
KILN_CM_HOT void row_per_tensor(const int8_t* a, const int8_t* b, int32_t cols, int32_t depth, const int32_t* terms,
                                int32_t row_term, int32_t multiplier, int32_t shift, const OutputStage& stage,
                                int8_t* out) {
  int32_t acc[kGemmColumnChunk + 8];
  const int32x4_t mult = vdupq_n_s32(multiplier);
  const int32x4_t left = vdupq_n_s32(shift > 0 ? shift : 0), neg_right = vdupq_n_s32(shift < 0 ? shift : 0);
  const int32x4_t lo = vdupq_n_s32(stage.activation_min), hi = vdupq_n_s32(stage.activation_max);
  for (int32_t c0 = 0; c0 < cols; c0 += kGemmColumnChunk) {
    const int32_t n = cols - c0 < kGemmColumnChunk ? cols - c0 : kGemmColumnChunk;
    const int8_t* block = b + static_cast<int64_t>(c0) * depth;
    int32_t c = 0;
    for (; c + 5 <= n; c += 5) {
      if (depth % kChunk != 0) {
        dots_1x5<true>(a, block + static_cast<int64_t>(c) * depth, depth, acc + c);
      } else {
        dots_1x5<false>(a, block + static_cast<int64_t>(c) * depth, depth, acc + c);
      }
    }
    if (c < n) {
      const int8_t* b0 = block + static_cast<int64_t>(c) * depth;
      const int8_t* b1 = c + 1 < n ? b0 + depth : b0;
      const int8_t* b2 = c + 2 < n ? b1 + depth : b1;
      const int8_t* b3 = c + 3 < n ? b2 + depth : b2;
      vstrwq_s32(acc + c, dots_1x4(a, b0, b1, b2, b3, depth));
    }
    for (c = 0; c < n; c += 4) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - c));
      int32x4_t x = vaddq_s32(vldrwq_s32(acc + c), vldrwq_z_s32(terms + c0 + c, p));
      x = requantize_lanes<kKind>(vaddq_n_s32(x, row_term), mult, left, neg_right);
      store_lanes(x, stage.output_offset, lo, hi, out + c0 + c, p);
    }
  }
}

/// One row against every column with one multiplier and shift (batch matmul, a fully
/// connected layer with a row offset).
template <ShiftKind kKind>
void one_row_per_tensor(const int8_t* a, const GemmColumns& k, int32_t row_term, int8_t* out) {
  const OutputStage stage{k.multiplier, k.shift, 0, k.output_offset, k.activation_min, k.activation_max};
  row_per_tensor<kKind>(a, k.b, k.cols, k.depth, k.terms, row_term, k.multiplier[0], k.shift[0], stage, out);
}

/// One row against every column, four columns a block (their parameters in lane order
/// from GemmColumns' arrays); a last block of fewer reuses its last column and stores only
/// its own lanes.
template <ShiftKind kKind>
KILN_CM_HOT void one_row(const int8_t* a, const GemmColumns& k, int32_t row_term, int8_t* out) {
  const int32_t depth = k.depth;
  const int32x4_t lo = vdupq_n_s32(k.activation_min), hi = vdupq_n_s32(k.activation_max);
  const int8_t* b = k.b;
  for (int32_t c = 0; c < k.cols; c += 4, b += 4 * depth) {
    const int32_t n = k.cols - c < 4 ? k.cols - c : 4;
    const int8_t* b1 = n > 1 ? b + depth : b;
    const int8_t* b2 = n > 2 ? b1 + depth : b1;
    const int8_t* b3 = n > 3 ? b2 + depth : b2;
    int32x4_t x = vaddq_s32(dots_1x4(a, b, b1, b2, b3, depth), vldrwq_s32(k.terms + c));
    x = requantize_lanes<kKind>(vaddq_n_s32(x, row_term), vldrwq_s32(k.multiplier + c), vldrwq_s32(k.left + c),
                                vldrwq_s32(k.neg_right + c));
    store_lanes(x, k.output_offset, lo, hi, out + c, vctp32q(static_cast<uint32_t>(n)));
  }
}

template <ShiftKind kKind>
void gemm_rows(const int8_t* a, int32_t rows, int32_t a_row_stride, const GemmColumns& k, int32_t b_offset,
               int8_t* out, int32_t out_row_stride, int8_t* scratch) {
  int32_t r = 0;
  if (scratch != nullptr) {
    for (; r + kRows <= rows; r += kRows) {
      const int8_t* a0 = a + static_cast<int64_t>(r) * a_row_stride;
      interleave3(a0, a_row_stride, k.depth, scratch);
      int8_t* o = out + static_cast<int64_t>(r) * out_row_stride;
      if (b_offset != 0) {
        const int32_t t2 = b_offset * sum_s8(a0 + 2 * a_row_stride, k.depth);
        const int32x4_t row_terms = lanes(b_offset * sum_s8(a0, k.depth),
                                          b_offset * sum_s8(a0 + a_row_stride, k.depth), t2, t2);
        three_rows_for_depth<kKind, true>(scratch, k, row_terms, out_row_stride, o);
      } else {
        three_rows_for_depth<kKind, false>(scratch, k, vdupq_n_s32(0), out_row_stride, o);
      }
    }
  }
  for (; r < rows; ++r) {
    const int8_t* row = a + static_cast<int64_t>(r) * a_row_stride;
    const int32_t term = b_offset != 0 ? b_offset * sum_s8(row, k.depth) : 0;
    int8_t* o = out + static_cast<int64_t>(r) * out_row_stride;
    if (k.per_tensor) {
      one_row_per_tensor<kKind>(row, k, term, o);
    } else {
      one_row<kKind>(row, k, term, o);
    }
  }
}

/// The dot products of one row with three columns and the columns' sums (VADDVA, an
/// instruction per column per 16 of depth): {dots} and {sums} in lanes 0-2. The loop is
/// assembly: VMLADAVA and VADDVA accumulate only into even-numbered registers, and GCC 12,
/// given six such accumulators, copies one through another register every iteration (13
/// instructions per 48 MACs); here the accumulators sit in r0-r10's even registers and the
/// pointers in odd ones, 11 instructions per 48 MACs. kTail (depth % 16 != 0) a variant of
/// its own, as dots_1x5. Not inlined, so that the registers it pins are free around it.
template <bool kTail>
__attribute__((noinline)) KILN_CM_HOT void dots_and_sums_1x3(const int8_t* a_in, const int8_t* b0_in,
                                                             const int8_t* b1_in, const int8_t* b2_in, int32_t depth,
                                                             int32x4_t* dots, int32x4_t* sums) {
  register int32_t s0 __asm__("r0") = 0;
  register int32_t s1 __asm__("r2") = 0;
  register int32_t s2 __asm__("r4") = 0;
  register int32_t t0 __asm__("r6") = 0;
  register int32_t t1 __asm__("r8") = 0;
  register int32_t t2 __asm__("r10") = 0;
  register const int8_t* a __asm__("r1") = a_in;
  register const int8_t* b0 __asm__("r3") = b0_in;
  register const int8_t* b1 __asm__("r5") = b1_in;
  register const int8_t* b2 __asm__("r9") = b2_in;
  const int32_t chunks = depth / kChunk;
  int8x16_t xv, wv;
  __asm__ volatile(
      "wls lr, %[n], 2f\n\t"
      "1:\n\t"
      "vldrb.8 %q[x], [%[a]], #16\n\t"
      "vldrb.8 %q[w], [%[b0]], #16\n\t"
      "vmladava.s8 %[s0], %q[x], %q[w]\n\t"
      "vaddva.s8 %[t0], %q[w]\n\t"
      "vldrb.8 %q[w], [%[b1]], #16\n\t"
      "vmladava.s8 %[s1], %q[x], %q[w]\n\t"
      "vaddva.s8 %[t1], %q[w]\n\t"
      "vldrb.8 %q[w], [%[b2]], #16\n\t"
      "vmladava.s8 %[s2], %q[x], %q[w]\n\t"
      "vaddva.s8 %[t2], %q[w]\n\t"
      "le lr, 1b\n\t"
      "2:\n\t"
      : [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [t0] "+r"(t0), [t1] "+r"(t1), [t2] "+r"(t2), [a] "+r"(a),
        [b0] "+r"(b0), [b1] "+r"(b1), [b2] "+r"(b2), [x] "=&w"(xv), [w] "=&w"(wv)
      : [n] "r"(chunks)
      : "lr", "memory");
  if (kTail) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(depth % kChunk));
    const int8x16_t x = vldrbq_z_s8(a, p);
    int8x16_t w = vldrbq_z_s8(b0, p);
    s0 = vmladavaq_s8(s0, x, w);
    t0 = vaddvaq_s8(t0, w);
    w = vldrbq_z_s8(b1, p);
    s1 = vmladavaq_s8(s1, x, w);
    t1 = vaddvaq_s8(t1, w);
    w = vldrbq_z_s8(b2, p);
    s2 = vmladavaq_s8(s2, x, w);
    t2 = vaddvaq_s8(t2, w);
  }
  *dots = lanes(s0, s1, s2, 0);
  *sums = lanes(t0, t1, t2, 0);
}

}  // namespace

KILN_CM_HOT int32_t sum_s8(const int8_t* x, int32_t n) {
  int32_t sum = 0;
  for (int32_t i = 0; i < n; i += kChunk) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n - i));
    sum = vaddvaq_p_s8(sum, vldrbq_z_s8(x + i, p), p);
  }
  return sum;
}

size_t gemm_scratch_bytes(int32_t depth) {
  return kRows * static_cast<size_t>((depth + kChunk - 1) / kChunk) * kChunk;
}

void gemm_s8(const int8_t* a, int32_t rows, int32_t a_row_stride, const GemmColumns& k, int32_t b_offset,
             int8_t* out, int32_t out_row_stride, int8_t* scratch) {
  if (k.cols <= 0 || rows <= 0) return;
  if (k.right_shifts_only) {
    gemm_rows<ShiftKind::kRightOnly>(a, rows, a_row_stride, k, b_offset, out, out_row_stride, scratch);
  } else {
    gemm_rows<ShiftKind::kAny>(a, rows, a_row_stride, k, b_offset, out, out_row_stride, scratch);
  }
}

void gemm_s8_row_with_terms(const int8_t* a, const int8_t* b, int32_t cols, int32_t depth, const int32_t* terms,
                            int32_t row_term, const OutputStage& stage, int8_t* out) {
  if (stage.shift[0] < 0) {
    row_per_tensor<ShiftKind::kRightOnly>(a, b, cols, depth, terms, row_term, stage.multiplier[0], stage.shift[0],
                                          stage, out);
  } else {
    row_per_tensor<ShiftKind::kAny>(a, b, cols, depth, terms, row_term, stage.multiplier[0], stage.shift[0], stage,
                                    out);
  }
}

KILN_CM_HOT void gemm_s8_row_with_bias(const int8_t* a, const int8_t* b, int32_t cols, int32_t depth,
                                       const int32_t* bias, int32_t a_offset, const OutputStage& stage,
                                       int8_t* out) {
  const int32x4_t lo = vdupq_n_s32(stage.activation_min), hi = vdupq_n_s32(stage.activation_max);
  for (int32_t c = 0; c < cols; c += 3) {
    const int32_t n = cols - c < 3 ? cols - c : 3;
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n));
    const int8_t* b0 = b + static_cast<int64_t>(c) * depth;
    const int8_t* b1 = n > 1 ? b0 + depth : b0;
    const int8_t* b2 = n > 2 ? b1 + depth : b1;
    int32x4_t dots, sums;
    if (depth % kChunk != 0) {
      dots_and_sums_1x3<true>(a, b0, b1, b2, depth, &dots, &sums);
    } else {
      dots_and_sums_1x3<false>(a, b0, b1, b2, depth, &dots, &sums);
    }
    int32x4_t acc = vmlaq_n_s32(dots, sums, a_offset);
    if (bias != nullptr) acc = vaddq_s32(acc, vldrwq_z_s32(bias + c, p));
    int32x4_t mult, shift;
    if (stage.stride == 0) {
      mult = vdupq_n_s32(stage.multiplier[0]);
      shift = vdupq_n_s32(stage.shift[0]);
    } else {
      mult = vldrwq_z_s32(stage.multiplier + c, p);
      shift = vldrwq_z_s32(stage.shift + c, p);
    }
    const int32x4_t zero = vdupq_n_s32(0);
    acc = requantize_lanes<ShiftKind::kAny>(acc, mult, vmaxq_s32(shift, zero), vminq_s32(shift, zero));
    store_lanes(acc, stage.output_offset, lo, hi, out + c, p);
  }
}

}  // namespace cortex_m
}  // namespace kiln
#endif
