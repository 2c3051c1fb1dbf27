// aten::embedding.out(Tensor weight, Tensor indices, SymInt padding_idx=-1,
//     bool scale_grad_by_freq=False, bool sparse=False, *, Tensor(a!) out)
//
// Row lookup: out[p] = weight[indices[p]] for a 2-D weight [rows, dim] and Long or
// Int indices of any shape; out is indices.shape + [dim]. padding_idx,
// scale_grad_by_freq and sparse only affect training. Indices must lie in [0, rows).
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/index_args.h"

namespace kiln {
namespace portable {

void embedding_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::embedding.out";
  ArgReader r(ctx, kName, args, 7);
  Tensor* weight = r.tensor(0);
  Tensor* indices = r.tensor(1);
  Tensor* out = r.tensor(5);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, weight->dim() == 2, Error::InvalidArgument, kName, "weight must be 2-D, got %s",
                    ShapeString(*weight).c_str());
  KILN_KERNEL_CHECK(ctx, indices->dim() < kTensorMaxDim, Error::InvalidArgument, kName, "indices have too many dims");
  if (!check_index_dtype(ctx, kName, *indices, true, "indices") ||
      !check_same_dtype(ctx, kName, *weight, *out, "weight", "out")) {
    return;
  }
  SizesType sizes[kTensorMaxDim];
  for (int32_t d = 0; d < indices->dim(); ++d) sizes[d] = indices->size(d);
  sizes[indices->dim()] = weight->size(1);
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(indices->dim() + 1)})) return;
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(*weight, *out) && !memory_overlaps(*indices, *out), Error::InvalidArgument,
                    kName, "out must not share memory with an input");
  const size_t row = static_cast<size_t>(weight->size(1)) * weight->element_size();
  const uint8_t* src = weight->const_data_ptr<uint8_t>();
  uint8_t* dst = out->mutable_data_ptr<uint8_t>();
  for (size_t i = 0; i < indices->numel(); ++i) {
    int64_t at = 0;
    if (!checked_index(ctx, kName, index_at(*indices, i), weight->size(0), false, &at)) return;
    if (row > 0) std::memcpy(dst + i * row, src + static_cast<size_t>(at) * row, row);
  }
}

}  // namespace portable
}  // namespace kiln
