// aten::select_copy.int_out(Tensor self, int dim, SymInt index, *, Tensor(a!) out)
//
// The slice at `index` (negative counts from the end) with `dim` removed.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void select_copy_int_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::select_copy.int_out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  int64_t index = r.int_value(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() > 0, Error::InvalidArgument, kName, "cannot select from a 0-dim tensor");
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim)) return;
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  const int64_t size = in->size(dim);
  if (index < 0) index += size;
  KILN_KERNEL_CHECK(ctx, index >= 0 && index < size, Error::InvalidArgument, kName,
                    "index %lld is out of range for size %lld at dim %d",
                    static_cast<long long>(index < 0 ? index - size : index),
                    static_cast<long long>(size), static_cast<int>(dim));
  SizesType sizes[kTensorMaxDim];
  int64_t sizes64[kTensorMaxDim];
  int64_t src_strides[kTensorMaxDim];
  int32_t rank = 0;
  for (int32_t d = 0; d < in->dim(); ++d) {
    if (d == dim) continue;
    sizes[rank] = in->size(d);
    sizes64[rank] = in->size(d);
    src_strides[rank] = in->strides()[d];
    ++rank;
  }
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(rank)})) return;
  if (out->numel() == 0) return;
  int64_t dst_strides[kTensorMaxDim];
  contiguous_strides(sizes64, rank, dst_strides);
  const uint8_t* src = in->const_data_ptr<uint8_t>() + index * in->strides()[dim] * in->element_size();
  strided_copy(src, src_strides, out->mutable_data_ptr(), dst_strides, sizes64, rank, in->element_size());
}

}  // namespace portable
}  // namespace kiln
