// gemm_s8_packed (gemm_s8.h): with Helium, blocks of two rows by three columns. The
// three filter rows are interleaved chunk by chunk (16 bytes of column 0, of 1, of 2,
// then the next 16 of each; zeros past the depth), so one post-incremented pointer with
// immediate offsets reads all three: per 16 bytes of depth, two input loads and three
// filter loads feed six VMLADAVA (96 multiply-accumulates). Six accumulators because
// VMLADAVA accumulates only into even-numbered registers (r0-r12: seven of them); with
// more, the compiler shuffles them through one register. The output stage requantizes
// a row's three columns as one vector (per-column multipliers and shifts) and stores
// three contiguous bytes.
#include <cstring>

#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/gemm_s8.h"

namespace kiln {
namespace cortex_m {

#if defined(KILN_CM_MVE)
namespace {

constexpr int32_t kColumns = 3;

void pack_columns(const int8_t* b, int32_t depth, int8_t* pack) {
  const int32_t chunks = (depth + 15) / 16;
  for (int32_t j = 0; j < chunks; ++j) {
    const int32_t n = depth - j * 16 < 16 ? depth - j * 16 : 16;
    for (int32_t q = 0; q < kColumns; ++q) {
      int8_t* dst = pack + (j * kColumns + q) * 16;
      std::memcpy(dst, b + static_cast<int64_t>(q) * depth + j * 16, static_cast<size_t>(n));
      if (n < 16) std::memset(dst + n, 0, static_cast<size_t>(16 - n));
    }
  }
}

/// The loop-invariant part of the output stage, in vectors.
struct VectorStage {
  int32x4_t mult, left, neg_right, lo, hi;
  int32_t offset;
};

// Requantizes one row's column accumulators (lanes 0-2) and stores them contiguously.
KILN_CM_HOT inline void store_row(int32x4_t acc, const VectorStage& v, mve_pred16_t lanes, int8_t* out) {
  int32x4_t x = vqrdmulhq_s32(vshlq_s32(acc, v.left), v.mult);
  // Round half away from zero: negative values step down by one before vrshl rounds up.
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, v.neg_right), 31);
  x = vrshlq_s32(vqaddq_s32(x, fixup), v.neg_right);
  x = vminq_s32(vmaxq_s32(vaddq_n_s32(x, v.offset), v.lo), v.hi);
  vstrbq_p_s32(out, x, lanes);
}

// Adds the dot products of rows a0, a1 with the three packed columns to lanes 0-2 of
// *acc0, *acc1 (their column terms).
KILN_CM_HOT inline void block_2x3(const int8_t* a0, const int8_t* a1, const int8_t* pack, int32_t depth,
                                  int32x4_t* acc0, int32x4_t* acc1) {
  int32_t s00 = vgetq_lane_s32(*acc0, 0), s01 = vgetq_lane_s32(*acc0, 1), s02 = vgetq_lane_s32(*acc0, 2);
  int32_t s10 = vgetq_lane_s32(*acc1, 0), s11 = vgetq_lane_s32(*acc1, 1), s12 = vgetq_lane_s32(*acc1, 2);
  int32_t i = 0;
  for (; i + 16 <= depth; i += 16) {
    const int8x16_t x0 = vldrbq_s8(a0 + i);
    const int8x16_t x1 = vldrbq_s8(a1 + i);
    int8x16_t w = vldrbq_s8(pack);
    s00 = vmladavaq_s8(s00, x0, w);
    s10 = vmladavaq_s8(s10, x1, w);
    w = vldrbq_s8(pack + 16);
    s01 = vmladavaq_s8(s01, x0, w);
    s11 = vmladavaq_s8(s11, x1, w);
    w = vldrbq_s8(pack + 32);
    s02 = vmladavaq_s8(s02, x0, w);
    s12 = vmladavaq_s8(s12, x1, w);
    pack += 16 * kColumns;
  }
  if (i < depth) {
    // The packed filters are zero past the depth; only the input loads need the predicate.
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(depth - i));
    const int8x16_t x0 = vldrbq_z_s8(a0 + i, p);
    const int8x16_t x1 = vldrbq_z_s8(a1 + i, p);
    int8x16_t w = vldrbq_s8(pack);
    s00 = vmladavaq_s8(s00, x0, w);
    s10 = vmladavaq_s8(s10, x1, w);
    w = vldrbq_s8(pack + 16);
    s01 = vmladavaq_s8(s01, x0, w);
    s11 = vmladavaq_s8(s11, x1, w);
    w = vldrbq_s8(pack + 32);
    s02 = vmladavaq_s8(s02, x0, w);
    s12 = vmladavaq_s8(s12, x1, w);
  }
  *acc0 = vsetq_lane_s32(s02, vsetq_lane_s32(s01, vsetq_lane_s32(s00, *acc0, 0), 1), 2);
  *acc1 = vsetq_lane_s32(s12, vsetq_lane_s32(s11, vsetq_lane_s32(s10, *acc1, 0), 1), 2);
}

}  // namespace

KILN_CM_HOT void gemm_s8_packed(const int8_t* a, int32_t rows, int32_t a_row_stride, const int8_t* b, int32_t cols,
                                int32_t depth, const int32_t* terms, const OutputStage& stage, int8_t* out,
                                int32_t out_row_stride, int8_t* pack) {
  // Blocks take two rows: a single one (a 1x1 image: SE gates, classifier heads) would
  // pack every filter for nothing.
  if (rows < 2) {
    gemm_s8(a, rows, a_row_stride, b, cols, depth, terms, 0, stage, out, out_row_stride);
    return;
  }
  const int32_t even_rows = rows & ~1;
  int32_t c = 0;
  const mve_pred16_t lanes = vctp32q(kColumns);
  for (; c + kColumns <= cols; c += kColumns) {
    pack_columns(b + static_cast<int64_t>(c) * depth, depth, pack);
    const int32x4_t column_terms = vldrwq_z_s32(terms + c, lanes);
    VectorStage v;
    int32x4_t shift;
    if (stage.stride == 0) {
      v.mult = vdupq_n_s32(stage.multiplier[0]);
      shift = vdupq_n_s32(stage.shift[0]);
    } else {
      v.mult = vldrwq_z_s32(stage.multiplier + c, lanes);
      shift = vldrwq_z_s32(stage.shift + c, lanes);
    }
    const int32x4_t zero = vdupq_n_s32(0);
    v.left = vmaxq_s32(shift, zero);
    v.neg_right = vminq_s32(shift, zero);
    v.lo = vdupq_n_s32(stage.activation_min);
    v.hi = vdupq_n_s32(stage.activation_max);
    v.offset = stage.output_offset;
    for (int32_t r = 0; r < even_rows; r += 2) {
      const int8_t* a0 = a + static_cast<int64_t>(r) * a_row_stride;
      int32x4_t acc0 = column_terms, acc1 = column_terms;
      block_2x3(a0, a0 + a_row_stride, pack, depth, &acc0, &acc1);
      int8_t* o = out + static_cast<int64_t>(r) * out_row_stride + c;
      store_row(acc0, v, lanes, o);
      store_row(acc1, v, lanes, o + out_row_stride);
    }
  }
  const OutputStage rest{stage.multiplier + c * stage.stride, stage.shift + c * stage.stride, stage.stride,
                         stage.output_offset, stage.activation_min, stage.activation_max};
  // The odd last row of the packed columns, then the columns left over, as gemm_s8 does.
  if (even_rows < rows && c > 0) {
    gemm_s8(a + static_cast<int64_t>(even_rows) * a_row_stride, rows - even_rows, a_row_stride, b, c, depth, terms,
            0, stage, out + static_cast<int64_t>(even_rows) * out_row_stride, out_row_stride);
  }
  if (c < cols) {
    gemm_s8(a, rows, a_row_stride, b + static_cast<int64_t>(c) * depth, cols - c, depth, terms + c, 0, rest,
            out + c, out_row_stride);
  }
}

#else

void gemm_s8_packed(const int8_t* a, int32_t rows, int32_t a_row_stride, const int8_t* b, int32_t cols,
                    int32_t depth, const int32_t* terms, const OutputStage& stage, int8_t* out,
                    int32_t out_row_stride, int8_t* /*pack*/) {
  gemm_s8(a, rows, a_row_stride, b, cols, depth, terms, 0, stage, out, out_row_stride);
}

#endif

}  // namespace cortex_m
}  // namespace kiln
