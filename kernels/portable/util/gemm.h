// A cache-blocked matrix multiply for mm, addmm, bmm and 1x1 convolution.
//
// C[M x N] = A[M x K] * B[K x N], all row-major with leading dimensions (in elements).
// Work is split into blocks of kRows rows of C by kCols columns: the block's partial
// sums live in a small stack array (L1) while K is walked, every loaded row segment of
// B is used for kRows rows, and the inner loop runs over contiguous columns so the
// compiler vectorises it. Column blocks are the outer loop so that the K x kCols panel
// of B stays in cache while all row blocks use it. No threads, no intrinsics.
#pragma once

#include <cstddef>

namespace kiln {
namespace portable {

namespace gemm_detail {

constexpr size_t kRows = 4;
constexpr size_t kCols = 128;

template <typename T, size_t R>
inline void block(size_t K, size_t cols, const T* A, size_t lda, const T* B, size_t ldb, T* C,
                  size_t ldc) {
  T acc[R][kCols];
  for (size_t r = 0; r < R; ++r) {
    for (size_t j = 0; j < cols; ++j) acc[r][j] = 0;
  }
  for (size_t k = 0; k < K; ++k) {
    const T* b = B + k * ldb;
    T a[R];
    for (size_t r = 0; r < R; ++r) a[r] = A[r * lda + k];
    for (size_t j = 0; j < cols; ++j) {
      const T bj = b[j];
      for (size_t r = 0; r < R; ++r) acc[r][j] += a[r] * bj;
    }
  }
  for (size_t r = 0; r < R; ++r) {
    T* c = C + r * ldc;
    for (size_t j = 0; j < cols; ++j) c[j] = acc[r][j];
  }
}

}  // namespace gemm_detail

/// C = A * B. C must not overlap A or B.
template <typename T>
void gemm(size_t M, size_t N, size_t K, const T* A, size_t lda, const T* B, size_t ldb, T* C,
          size_t ldc) {
  using namespace gemm_detail;
  for (size_t j0 = 0; j0 < N; j0 += kCols) {
    const size_t cols = N - j0 < kCols ? N - j0 : kCols;
    size_t i = 0;
    for (; i + kRows <= M; i += kRows) {
      block<T, kRows>(K, cols, A + i * lda, lda, B + j0, ldb, C + i * ldc + j0, ldc);
    }
    for (; i < M; ++i) {
      block<T, 1>(K, cols, A + i * lda, lda, B + j0, ldb, C + i * ldc + j0, ldc);
    }
  }
}

}  // namespace portable
}  // namespace kiln
