// aten::unfold_copy.out(Tensor self, int dimension, int size, int step, *, Tensor(a!) out)
//
// Every window of `size` elements along `dimension`, `step` apart: that dimension
// becomes the window count, (n - size) / step + 1, and a last dimension of `size`
// holds each window. A 0-dim self is treated as one element.
#include "kernels/portable/util/strided_view.h"

namespace kiln {
namespace portable {

void unfold_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::unfold_copy.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  const int64_t size = r.int_value(2);
  const int64_t step = r.int_value(3);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim)) return;
  KILN_KERNEL_CHECK(ctx, in->dim() < kTensorMaxDim, Error::InvalidArgument, kName, "self has too many dims");
  int64_t sizes[kTensorMaxDim];
  int64_t strides[kTensorMaxDim];
  sizes_and_strides(*in, sizes, strides);
  const int64_t extent = in->dim() > 0 ? sizes[dim] : 1;
  const int64_t stride = in->dim() > 0 ? strides[dim] : 1;
  KILN_KERNEL_CHECK(ctx, step > 0 && step <= INT32_MAX, Error::InvalidArgument, kName,
                    "step %lld must be positive", static_cast<long long>(step));
  KILN_KERNEL_CHECK(ctx, size >= 0 && size <= extent, Error::InvalidArgument, kName,
                    "size %lld must be in [0, %lld] (the size of dim %d)", static_cast<long long>(size),
                    static_cast<long long>(extent), static_cast<int>(dim));
  int32_t rank = in->dim();
  if (rank > 0) {
    sizes[dim] = (extent - size) / step + 1;
    strides[dim] = stride * step;
  }
  sizes[rank] = size;
  strides[rank++] = stride;
  copy_strided_view(ctx, kName, *in, *out, sizes, strides, rank, 0);
}

}  // namespace portable
}  // namespace kiln
