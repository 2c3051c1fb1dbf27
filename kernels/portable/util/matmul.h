// Shape and dtype checks shared by mm, bmm and addmm.
#pragma once

#include "kernels/portable/util/gemm.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

/// Checks that a [.., M, K] and b [.., K, N] have `rank` dims, matching inner sizes and
/// batch, one dtype (Float or Double) with out, and that out overlaps neither; resizes
/// out to [.., M, N].
inline bool check_matmul(KernelContext& ctx, const char* op, const Tensor& a, const Tensor& b,
                         Tensor& out, int32_t rank) {
  if (a.dim() != rank || b.dim() != rank) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "operands must be %d-D, got %s and %s",
                     static_cast<int>(rank), ShapeString(a).c_str(), ShapeString(b).c_str());
    return false;
  }
  if (a.size(-1) != b.size(-2) || (rank == 3 && a.size(0) != b.size(0))) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "shapes %s and %s cannot be multiplied",
                     ShapeString(a).c_str(), ShapeString(b).c_str());
    return false;
  }
  if (!check_same_dtype(ctx, op, a, b, "self", "mat2") ||
      !check_same_dtype(ctx, op, a, out, "self", "out")) {
    return false;
  }
  if (a.scalar_type() != ScalarType::Float && a.scalar_type() != ScalarType::Double) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, op, "dtype %s is not supported (Float, Double)",
                     scalar_type_name(a.scalar_type()));
    return false;
  }
  SizesType sizes[3] = {a.size(0), a.size(-2), b.size(-1)};
  if (rank == 2) {
    sizes[0] = a.size(0);
    sizes[1] = b.size(1);
  }
  if (!resize_output(ctx, op, out, {sizes, static_cast<size_t>(rank)})) return false;
  if (out.numel() > 0 && (out.const_data_ptr() == a.const_data_ptr() ||
                          out.const_data_ptr() == b.const_data_ptr())) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "out must not share memory with an input");
    return false;
  }
  return true;
}

/// out[M x N] = a[M x K] * b[K x N] for contiguous 2-D tensors of dtype T.
template <typename T>
void matmul_2d(const Tensor& a, const Tensor& b, Tensor& out) {
  const size_t M = static_cast<size_t>(a.size(0));
  const size_t K = static_cast<size_t>(a.size(1));
  const size_t N = static_cast<size_t>(b.size(1));
  gemm<T>(M, N, K, a.const_data_ptr<T>(), K, b.const_data_ptr<T>(), N, out.mutable_data_ptr<T>(), N);
}

}  // namespace portable
}  // namespace kiln
