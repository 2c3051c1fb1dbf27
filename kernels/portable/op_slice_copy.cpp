// aten::slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None,
//     SymInt step=1, *, Tensor(a!) out)
//
// start/end follow Python slicing: negative values count from the end and both are
// clamped to [0, size]; step must be positive.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/shape_args.h"

namespace kiln {
namespace portable {

void slice_copy_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::slice_copy.Tensor_out";
  ArgReader r(ctx, kName, args, 7);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  int64_t start = r.optional_int(2, 0);
  bool has_end = false;
  const int64_t end = r.optional_int(3, 0, &has_end);
  const int64_t step = r.int_value(4);
  Tensor* out = r.tensor(5);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!check_slice(ctx, kName, *in, dim_arg, step, &dim)) return;
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  int64_t count = 0;
  python_slice(in->size(dim), start, has_end, end, step, &start, &count);
  const int32_t rank = in->dim();
  SizesType sizes[kTensorMaxDim];
  int64_t sizes64[kTensorMaxDim];
  int64_t src_strides[kTensorMaxDim];
  for (int32_t d = 0; d < rank; ++d) {
    sizes64[d] = d == dim ? count : in->size(d);
    sizes[d] = static_cast<SizesType>(sizes64[d]);
    src_strides[d] = in->strides()[d] * (d == dim && count > 1 ? step : 1);
  }
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(rank)})) return;
  if (out->numel() == 0) return;
  int64_t dst_strides[kTensorMaxDim];
  contiguous_strides(sizes64, rank, dst_strides);
  const uint8_t* src = in->const_data_ptr<uint8_t>() + start * in->strides()[dim] * in->element_size();
  strided_copy(src, src_strides, out->mutable_data_ptr(), dst_strides, sizes64, rank, in->element_size());
}

}  // namespace portable
}  // namespace kiln
