// The flavour-independent parts of gemm_s8.h (column preparation, the scalar reference)
// and the portable flavour's products: rows four at a time, so that each load of a
// column feeds four dot products.
#include "kernels/cortex_m/util/gemm_s8.h"

#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {

void gemm_prepare_columns(const int8_t* b, int32_t cols, int32_t depth, const int32_t* bias,
                          const int32_t* kernel_sum, int32_t a_offset, int32_t b_offset,
                          const OutputStage& stage, GemmColumns* out) {
  out->b = b;
  out->cols = cols;
  out->depth = depth;
  out->output_offset = stage.output_offset;
  out->activation_min = stage.activation_min;
  out->activation_max = stage.activation_max;
  out->per_tensor = stage.stride == 0;
  out->right_shifts_only = true;
  for (int32_t c = 0; c < kGemmColumnChunk + 4; ++c) {
    if (c >= cols) {
      out->terms[c] = out->multiplier[c] = out->shift[c] = out->left[c] = out->neg_right[c] = 0;
      continue;
    }
    int32_t term;
    if (kernel_sum != nullptr) {
      term = kernel_sum[c];
    } else {
      term = bias != nullptr ? bias[c] : 0;
      if (a_offset != 0) term += a_offset * sum_s8(b + static_cast<int64_t>(c) * depth, depth);
      term += a_offset * b_offset * depth;
    }
    const int32_t shift = stage.shift[c * stage.stride];
    out->terms[c] = term;
    out->multiplier[c] = stage.multiplier[c * stage.stride];
    out->shift[c] = shift;
    out->left[c] = shift > 0 ? shift : 0;
    out->neg_right[c] = shift < 0 ? shift : 0;
    if (shift >= 0) out->right_shifts_only = false;
  }
}

namespace {

inline int8_t output_value(int32_t acc, const GemmColumns& k, int32_t c) {
  const int32_t y = requantize(acc, k.multiplier[c], k.shift[c]) + k.output_offset;
  return static_cast<int8_t>(clamp(y, k.activation_min, k.activation_max));
}

}  // namespace

void gemm_s8_scalar(const int8_t* a, int32_t rows, int32_t a_row_stride, const GemmColumns& k, int32_t b_offset,
                    int8_t* out, int32_t out_row_stride) {
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* row = a + static_cast<int64_t>(r) * a_row_stride;
    int32_t row_sum = 0;
    for (int32_t i = 0; i < k.depth; ++i) row_sum += row[i];
    for (int32_t c = 0; c < k.cols; ++c) {
      const int8_t* column = k.b + static_cast<int64_t>(c) * k.depth;
      int32_t acc = k.terms[c] + b_offset * row_sum;
      for (int32_t i = 0; i < k.depth; ++i) acc += row[i] * column[i];
      out[static_cast<int64_t>(r) * out_row_stride + c] = output_value(acc, k, c);
    }
  }
}

#if !defined(KILN_CM_MVE) && !defined(KILN_CM_DSP)
void gemm_s8_row_with_terms(const int8_t* a, const int8_t* b, int32_t cols, int32_t depth, const int32_t* terms,
                            int32_t row_term, const OutputStage& stage, int8_t* out) {
  for (int32_t c = 0; c < cols; ++c) {
    const int8_t* column = b + static_cast<int64_t>(c) * depth;
    int32_t acc = terms[c] + row_term;
    for (int32_t i = 0; i < depth; ++i) acc += a[i] * column[i];
    const int32_t y = requantize(acc, stage.multiplier[0], stage.shift[0]) + stage.output_offset;
    out[c] = static_cast<int8_t>(clamp(y, stage.activation_min, stage.activation_max));
  }
}

void gemm_s8_row_with_bias(const int8_t* a, const int8_t* b, int32_t cols, int32_t depth, const int32_t* bias,
                           int32_t a_offset, const OutputStage& stage, int8_t* out) {
  GemmColumns k;
  for (int32_t c0 = 0; c0 < cols; c0 += kGemmColumnChunk) {
    const int32_t n = cols - c0 < kGemmColumnChunk ? cols - c0 : kGemmColumnChunk;
    const OutputStage at{stage.multiplier + c0 * stage.stride, stage.shift + c0 * stage.stride, stage.stride,
                         stage.output_offset, stage.activation_min, stage.activation_max};
    gemm_prepare_columns(b + static_cast<int64_t>(c0) * depth, n, depth, bias != nullptr ? bias + c0 : nullptr,
                         nullptr, a_offset, 0, at, &k);
    gemm_s8(a, 1, depth, k, 0, out + c0, n, nullptr);
  }
}
#endif

#if !defined(KILN_CM_MVE) && !defined(KILN_CM_DSP)

int32_t sum_s8(const int8_t* x, int32_t n) {
  int32_t sum = 0;
  for (int32_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

size_t gemm_scratch_bytes(int32_t /*depth*/) { return 0; }

KILN_CM_HOT void gemm_s8(const int8_t* a, int32_t rows, int32_t a_row_stride, const GemmColumns& k,
                         int32_t b_offset, int8_t* out, int32_t out_row_stride, int8_t* /*scratch*/) {
  int32_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const int8_t* a0 = a + static_cast<int64_t>(r) * a_row_stride;
    const int8_t* a1 = a0 + a_row_stride;
    const int8_t* a2 = a1 + a_row_stride;
    const int8_t* a3 = a2 + a_row_stride;
    int32_t row_terms[4] = {0, 0, 0, 0};
    if (b_offset != 0) {
      row_terms[0] = b_offset * sum_s8(a0, k.depth);
      row_terms[1] = b_offset * sum_s8(a1, k.depth);
      row_terms[2] = b_offset * sum_s8(a2, k.depth);
      row_terms[3] = b_offset * sum_s8(a3, k.depth);
    }
    int8_t* o = out + static_cast<int64_t>(r) * out_row_stride;
    for (int32_t c = 0; c < k.cols; ++c) {
      const int8_t* w = k.b + static_cast<int64_t>(c) * k.depth;
      int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (int32_t i = 0; i < k.depth; ++i) {
        s0 += a0[i] * w[i];
        s1 += a1[i] * w[i];
        s2 += a2[i] * w[i];
        s3 += a3[i] * w[i];
      }
      o[c] = output_value(s0 + k.terms[c] + row_terms[0], k, c);
      o[out_row_stride + c] = output_value(s1 + k.terms[c] + row_terms[1], k, c);
      o[2 * out_row_stride + c] = output_value(s2 + k.terms[c] + row_terms[2], k, c);
      o[3 * out_row_stride + c] = output_value(s3 + k.terms[c] + row_terms[3], k, c);
    }
  }
  if (r < rows) {
    gemm_s8_scalar(a + static_cast<int64_t>(r) * a_row_stride, rows - r, a_row_stride, k, b_offset,
                   out + static_cast<int64_t>(r) * out_row_stride, out_row_stride);
  }
}

#endif

}  // namespace cortex_m
}  // namespace kiln
