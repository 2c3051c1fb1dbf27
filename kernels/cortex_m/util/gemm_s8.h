// int8 matrix products with CMSIS-NN's offsets and requantization: the inner loop of
// convolutions (im2col rows or NHWC pixels against OHWI filters), fully connected layers
// and batch matmul. Rows of `a` meet columns of `b`, each column stored as a row of `depth`
// int8 (what OHWI filters and [N, K] weights are). One implementation per flavour
// (flavour.h): gemm_s8_mve.cpp (Helium), gemm_s8_dsp.cpp (SIMD32), gemm_s8.cpp (portable
// C++); every flavour computes the same integers.
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

/// Columns a GemmColumns holds at most.
constexpr int32_t kGemmColumnChunk = 64;

/// Up to kGemmColumnChunk columns, prepared once for all the rows they meet: each column's
/// constant term and requantization parameters (the shift also split into its left and
/// right parts, as the vector output stage uses them). Four padding entries (zeros) let a
/// vector flavour read whole vectors past the last column.
struct GemmColumns {
  const int8_t* b = nullptr;
  int32_t cols = 0;
  int32_t depth = 0;
  int32_t output_offset = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
  bool per_tensor = false;         // one multiplier and shift for all columns
  bool right_shifts_only = false;  // every shift is negative
  int32_t terms[kGemmColumnChunk + 4];
  int32_t multiplier[kGemmColumnChunk + 4];
  int32_t shift[kGemmColumnChunk + 4];
  int32_t left[kGemmColumnChunk + 4];       // max(shift, 0)
  int32_t neg_right[kGemmColumnChunk + 4];  // min(shift, 0)
};

/// Prepares columns [0, cols) of `b` (cols <= kGemmColumnChunk); `stage` points at column
/// 0's multiplier and shift. Each column's term is
///   kernel_sum != nullptr:  kernel_sum[c]
///   otherwise:              bias[c] (0 without bias) + a_offset * sum_k b[c][k]
///                           + a_offset * b_offset * depth
void gemm_prepare_columns(const int8_t* b, int32_t cols, int32_t depth, const int32_t* bias,
                          const int32_t* kernel_sum, int32_t a_offset, int32_t b_offset,
                          const OutputStage& stage, GemmColumns* out);

/// Bytes of scratch memory gemm_s8() takes for `depth` (Helium interleaves two rows in it;
/// the other flavours take none).
size_t gemm_scratch_bytes(int32_t depth);

/// out[r * out_row_stride + c] = clamp(requantize(sum_k a[r][k] * b[c][k] + terms[c]
///     + b_offset * sum_k a[r][k]) + output_offset)   for r < rows, c < columns.cols.
/// a: rows of `depth` int8 at a_row_stride. `scratch`: gemm_scratch_bytes(depth) bytes,
/// or nullptr, which costs Helium speed (rows then go one at a time).
void gemm_s8(const int8_t* a, int32_t rows, int32_t a_row_stride, const GemmColumns& columns,
             int32_t b_offset, int8_t* out, int32_t out_row_stride, int8_t* scratch);

/// One row of `a` against `cols` columns (any number) whose terms are bias[c] (0 without)
/// + a_offset * sum_k b[c][k], per-tensor requantization: a fully connected layer given a
/// bias and no kernel sums. Helium sums each column while it multiplies it, which costs
/// less than a pass of its own over the weights.
void gemm_s8_row_with_bias(const int8_t* a, const int8_t* b, int32_t cols, int32_t depth,
                           const int32_t* bias, int32_t a_offset, const OutputStage& stage,
                           int8_t* out);

/// One row of `a` against `cols` columns (any number) whose terms are given (`terms[c]`,
/// e.g. a fully connected layer's kernel sums), plus `row_term` (b_offset * sum of the
/// row), per-tensor requantization (stage.stride 0).
void gemm_s8_row_with_terms(const int8_t* a, const int8_t* b, int32_t cols, int32_t depth,
                            const int32_t* terms, int32_t row_term, const OutputStage& stage, int8_t* out);

/// The scalar reference of gemm_s8 (any flavour's fallback).
void gemm_s8_scalar(const int8_t* a, int32_t rows, int32_t a_row_stride, const GemmColumns& columns,
                    int32_t b_offset, int8_t* out, int32_t out_row_stride);

/// Sum of `n` int8 (each flavour's fastest form).
int32_t sum_s8(const int8_t* x, int32_t n);

}  // namespace cortex_m
}  // namespace kiln
