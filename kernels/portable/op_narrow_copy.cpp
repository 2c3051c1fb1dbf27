// aten::narrow_copy.out(Tensor self, int dim, SymInt start, SymInt length, *,
//     Tensor(a!) out)
//
// Elements [start, start + length) of `dim`; a negative start counts from the end.
#include "kernels/portable/util/strided_view.h"

namespace kiln {
namespace portable {

void narrow_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::narrow_copy.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  int64_t start = r.int_value(2);
  const int64_t length = r.int_value(3);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() > 0, Error::InvalidArgument, kName, "cannot narrow a 0-dim tensor");
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim)) return;
  const int64_t size = in->size(dim);
  if (start < 0 && start >= -size) start += size;
  KILN_KERNEL_CHECK(ctx, start >= 0 && length >= 0 && start <= size && length <= size - start,
                    Error::InvalidArgument, kName, "start %lld and length %lld do not fit size %lld of dim %d",
                    static_cast<long long>(start), static_cast<long long>(length), static_cast<long long>(size),
                    static_cast<int>(dim));
  int64_t sizes[kTensorMaxDim];
  int64_t strides[kTensorMaxDim];
  sizes_and_strides(*in, sizes, strides);
  sizes[dim] = length;
  copy_strided_view(ctx, kName, *in, *out, sizes, strides, in->dim(), length > 0 ? start * strides[dim] : 0);
}

}  // namespace portable
}  // namespace kiln
