// int8 matrix products with CMSIS-NN's offsets and requantization: the inner loop of
// convolution (im2col rows or NHWC pixels against OHWI filters), fully connected layers
// and batch matmul. Every flavour (flavour.h) computes the same integers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {
namespace cortex_m {

/// Output stage: per-column (stride 1) or per-tensor (stride 0) multiplier and shift,
/// then the output offset and the activation clamp.
struct OutputStage {
  const int32_t* multiplier;
  const int32_t* shift;
  int32_t stride;
  int32_t output_offset;
  int32_t activation_min;
  int32_t activation_max;
};

/// Columns a block works on at once; their constant terms live on the stack.
constexpr int32_t kGemmColumnChunk = 64;

/// The part of each column's accumulator that does not depend on the row, for columns
/// [0, cols) of b (cols rows of `depth` int8, contiguous):
///   kernel_sum != nullptr:  kernel_sum[c]
///   otherwise:              bias[c] (0 without bias) + a_offset * sum_k b[c][k]
///                           + a_offset * b_offset * depth
void gemm_column_terms(const int8_t* b, int32_t cols, int32_t depth, const int32_t* bias,
                       const int32_t* kernel_sum, int32_t a_offset, int32_t b_offset,
                       int32_t* terms);

/// out[r * out_row_stride + c] = clamp(requantize(sum_k a[r][k] * b[c][k] + terms[c]
///     + b_offset * sum_k a[r][k]) + output_offset)   for r < rows, c < cols.
/// a: rows of `depth` int8 at a_row_stride; b: cols rows of `depth` int8, contiguous.
/// `stage` points at column 0's multiplier and shift.
void gemm_s8(const int8_t* a, int32_t rows, int32_t a_row_stride, const int8_t* b,
             int32_t cols, int32_t depth, const int32_t* terms, int32_t b_offset,
             const OutputStage& stage, int8_t* out, int32_t out_row_stride);

/// Bytes of pack memory gemm_s8_packed() needs for `depth`.
inline size_t gemm_pack_bytes(int32_t depth) { return 3 * static_cast<size_t>((depth + 15) / 16) * 16; }

/// gemm_s8 with b_offset 0 (a convolution's filters), faster with Helium: three columns
/// at a time are copied into `pack` (gemm_pack_bytes(depth)), interleaved in 16-byte
/// chunks, so that one pointer walks all three and each loaded input vector feeds three
/// dot products (two rows by three columns per block, accumulators in registers).
/// Other flavours run gemm_s8. Same integers either way.
void gemm_s8_packed(const int8_t* a, int32_t rows, int32_t a_row_stride, const int8_t* b, int32_t cols,
                    int32_t depth, const int32_t* terms, const OutputStage& stage, int8_t* out,
                    int32_t out_row_stride, int8_t* pack);

}  // namespace cortex_m
}  // namespace kiln
