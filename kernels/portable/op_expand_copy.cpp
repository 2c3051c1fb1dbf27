// aten::expand_copy.out(Tensor self, SymInt[] size, *, bool implicit=False, Tensor(a!) out)
//
// Broadcasts self to `size` (-1 keeps a dimension; new dimensions go in front) by
// reading expanded dimensions with stride 0.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void expand_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::expand_copy.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> size = r.int_list(1);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  const int32_t rank = static_cast<int32_t>(size.size());
  KILN_KERNEL_CHECK(ctx, rank <= kTensorMaxDim && rank >= in->dim(), Error::InvalidArgument, kName,
                    "cannot expand %s to %d dims", ShapeString(*in).c_str(), static_cast<int>(rank));
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  const int32_t shift = rank - in->dim();
  SizesType sizes[kTensorMaxDim];
  int64_t sizes64[kTensorMaxDim];
  int64_t src_strides[kTensorMaxDim];
  for (int32_t d = 0; d < rank; ++d) {
    const int64_t in_size = d >= shift ? in->size(d - shift) : 1;
    const int64_t want = size[d] == -1 && d >= shift ? in_size : size[d];
    KILN_KERNEL_CHECK(ctx, want >= 0 && want <= INT32_MAX && (in_size == want || in_size == 1),
                      Error::InvalidArgument, kName, "cannot expand %s to size %lld at dim %d",
                      ShapeString(*in).c_str(), static_cast<long long>(size[d]), static_cast<int>(d));
    sizes[d] = static_cast<SizesType>(want);
    sizes64[d] = want;
    src_strides[d] = (d < shift || in_size == 1) ? 0 : in->strides()[d - shift];
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
