// aten::flip.out(Tensor self, int[] dims, *, Tensor(a!) out)
//
// Reverses the order of elements along each of `dims` (negative dims count from the
// end; a dimension may not be repeated): self is read from the far end of each
// flipped dimension with a negative stride.
#include "kernels/portable/util/strided_view.h"

namespace kiln {
namespace portable {

void flip_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::flip.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> dims = r.int_list(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  int64_t sizes[kTensorMaxDim];
  int64_t strides[kTensorMaxDim];
  sizes_and_strides(*in, sizes, strides);
  bool flipped[kTensorMaxDim] = {};
  int64_t offset = 0;
  for (const int64_t dim_arg : dims) {
    int32_t dim = 0;
    if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim)) return;
    KILN_KERNEL_CHECK(ctx, !flipped[dim], Error::InvalidArgument, kName, "dim %d appears twice", static_cast<int>(dim));
    flipped[dim] = true;
    if (in->dim() == 0) continue;
    if (sizes[dim] > 0) offset += (sizes[dim] - 1) * strides[dim];
    strides[dim] = -strides[dim];
  }
  copy_strided_view(ctx, kName, *in, *out, sizes, strides, in->dim(), in->numel() > 0 ? offset : 0);
}

}  // namespace portable
}  // namespace kiln
