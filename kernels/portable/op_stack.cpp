// aten::stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out)
//
// Inputs of one shape joined along a new dimension `dim` (in [-(rank + 1), rank]).
// Inputs of other dtypes are converted to out's, as torch.stack promotes them.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

void stack_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::stack.out";
  ArgReader r(ctx, kName, args, 4);
  const Span<Tensor* const> tensors = r.tensor_list(0);
  const int64_t dim_arg = r.int_value(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, !tensors.empty(), Error::InvalidArgument, kName, "no tensors to stack");
  const Tensor& first = *tensors[0];
  KILN_KERNEL_CHECK(ctx, first.dim() < kTensorMaxDim, Error::InvalidArgument, kName, "inputs have too many dims");
  KILN_KERNEL_CHECK(ctx, tensors.size() <= static_cast<size_t>(INT32_MAX), Error::InvalidArgument, kName,
                    "too many tensors");
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, first.dim() + 1, &dim)) return;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i];
    KILN_KERNEL_CHECK(ctx, same_shape(t, first), Error::InvalidArgument, kName,
                      "input %zu has shape %s, input 0 has %s", i, ShapeString(t).c_str(), ShapeString(first).c_str());
    KILN_KERNEL_CHECK(ctx, can_cast(t.scalar_type(), out->scalar_type()), Error::InvalidType, kName,
                      "input %zu has dtype %s, which cannot be written to a %s out", i,
                      scalar_type_name(t.scalar_type()), scalar_type_name(out->scalar_type()));
    KILN_KERNEL_CHECK(ctx, !memory_overlaps(t, *out), Error::InvalidArgument, kName,
                      "out must not share memory with an input");
  }
  SizesType sizes[kTensorMaxDim];
  for (int32_t d = 0, k = 0; d <= first.dim(); ++d) {
    sizes[d] = d == dim ? static_cast<SizesType>(tensors.size()) : first.size(k++);
  }
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(first.dim() + 1)})) return;
  // Input i is out's slice i along dim: self's dims with out's strides, dim skipped.
  int64_t shape[kTensorMaxDim];
  int64_t src_strides[kTensorMaxDim];
  int64_t dst_strides[kTensorMaxDim];
  for (int32_t d = 0, k = 0; d <= first.dim(); ++d) {
    if (d == dim) continue;
    shape[k] = first.size(k);
    src_strides[k] = first.strides()[k];
    dst_strides[k++] = out->strides()[d];
  }
  const size_t esize = out->element_size();
  for (size_t i = 0; i < tensors.size() && out->numel() > 0; ++i) {
    const Tensor& t = *tensors[i];
    uint8_t* dst = out->mutable_data_ptr<uint8_t>() + i * static_cast<size_t>(out->strides()[dim]) * esize;
    if (t.scalar_type() == out->scalar_type()) {
      strided_copy(t.const_data_ptr(), src_strides, dst, dst_strides, shape, first.dim(), esize);
    } else {
      KILN_KERNEL_CHECK(ctx,
                        strided_cast_copy(t.const_data_ptr(), t.scalar_type(), src_strides, dst, out->scalar_type(),
                                          dst_strides, shape, first.dim()),
                        Error::InvalidType, kName, "cannot convert %s to %s", scalar_type_name(t.scalar_type()),
                        scalar_type_name(out->scalar_type()));
    }
  }
}

}  // namespace portable
}  // namespace kiln
