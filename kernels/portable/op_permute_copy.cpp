// aten::permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out)
//
// out.size(i) = self.size(dims[i]); elements are gathered with self's strides permuted.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void permute_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::permute_copy.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> dims = r.int_list(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  const int32_t rank = in->dim();
  KILN_KERNEL_CHECK(ctx, dims.size() == static_cast<size_t>(rank), Error::InvalidArgument, kName,
                    "%zu dims given for a rank-%d tensor", dims.size(), static_cast<int>(rank));
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  bool seen[kTensorMaxDim] = {};
  SizesType sizes[kTensorMaxDim];
  int64_t sizes64[kTensorMaxDim];
  int64_t src_strides[kTensorMaxDim];
  for (int32_t i = 0; i < rank; ++i) {
    int32_t d = 0;
    if (!normalize_dim(ctx, kName, dims[i], rank, &d)) return;
    KILN_KERNEL_CHECK(ctx, !seen[d], Error::InvalidArgument, kName, "dim %d repeats", static_cast<int>(d));
    seen[d] = true;
    sizes[i] = in->size(d);
    sizes64[i] = in->size(d);
    src_strides[i] = in->strides()[d];
  }
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(rank)})) return;
  KILN_KERNEL_CHECK(ctx, out->numel() == 0 || out->const_data_ptr() != in->const_data_ptr(),
                    Error::InvalidArgument, kName, "out must not share memory with self");
  int64_t dst_strides[kTensorMaxDim];
  contiguous_strides(sizes64, rank, dst_strides);
  strided_copy(in->const_data_ptr(), src_strides, out->mutable_data_ptr(), dst_strides, sizes64,
               rank, in->element_size());
}

}  // namespace portable
}  // namespace kiln
