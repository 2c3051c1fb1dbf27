// Materialising a strided view of a tensor: the body of the view-copy kernels
// (transpose, diagonal, narrow, unfold, as_strided) once each has worked out the
// view's sizes, strides and offset into self.
#pragma once

#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

/// The view of `in`'s elements with `sizes` and `strides` (both `rank` entries, in
/// elements) starting `offset` elements into `in`, copied into `out` (resized to
/// `sizes`, same dtype as `in`). The caller guarantees the view stays inside `in`.
inline void copy_strided_view(KernelContext& ctx, const char* op, const Tensor& in, Tensor& out,
                              const int64_t* sizes, const int64_t* strides, int32_t rank, int64_t offset) {
  if (!check_same_dtype(ctx, op, in, out, "self", "out")) return;
  SizesType out_sizes[kTensorMaxDim];
  for (int32_t d = 0; d < rank; ++d) {
    KILN_KERNEL_CHECK(ctx, sizes[d] >= 0 && sizes[d] <= INT32_MAX, Error::InvalidArgument, op,
                      "size %lld of dim %d is invalid", static_cast<long long>(sizes[d]), static_cast<int>(d));
    out_sizes[d] = static_cast<SizesType>(sizes[d]);
  }
  if (!resize_output(ctx, op, out, {out_sizes, static_cast<size_t>(rank)})) return;
  if (out.numel() == 0) return;
  KILN_KERNEL_CHECK(ctx, out.const_data_ptr() != in.const_data_ptr(), Error::InvalidArgument, op,
                    "out must not share memory with self");
  int64_t dst_strides[kTensorMaxDim];
  contiguous_strides(sizes, rank, dst_strides);
  const size_t esize = in.element_size();
  strided_copy(in.const_data_ptr<uint8_t>() + static_cast<size_t>(offset) * esize, strides,
               out.mutable_data_ptr(), dst_strides, sizes, rank, esize);
}

/// sizes and strides of `t` as int64 (for building views).
inline void sizes_and_strides(const Tensor& t, int64_t* sizes, int64_t* strides) {
  for (int32_t d = 0; d < t.dim(); ++d) {
    sizes[d] = t.size(d);
    strides[d] = t.strides()[d];
  }
}

}  // namespace portable
}  // namespace kiln
