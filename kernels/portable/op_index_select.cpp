// aten::index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out)
//
// The slices of self at positions `index` (1-D or 0-dim, Long or Int, each in
// [0, size)) along `dim`, in index order: out has self's shape with dim's size
// replaced by the index count.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/index_args.h"

namespace kiln {
namespace portable {

void index_select_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::index_select.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  Tensor* index = r.tensor(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim) || !check_index_dtype(ctx, kName, *index, true) ||
      !check_same_dtype(ctx, kName, *in, *out, "self", "out")) {
    return;
  }
  KILN_KERNEL_CHECK(ctx, index->dim() <= 1, Error::InvalidArgument, kName, "index %s must be 1-D or 0-dim",
                    ShapeString(*index).c_str());
  KILN_KERNEL_CHECK(ctx, in->dim() > 0 || index->numel() == 1, Error::InvalidArgument, kName,
                    "a 0-dim self takes one index, got %zu", index->numel());
  SizesType sizes[kTensorMaxDim];
  size_t outer = 1, inner = 1;
  for (int32_t d = 0; d < in->dim(); ++d) {
    sizes[d] = d == dim ? static_cast<SizesType>(index->numel()) : in->size(d);
    if (d < dim) outer *= static_cast<size_t>(in->size(d));
    if (d > dim) inner *= static_cast<size_t>(in->size(d));
  }
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(in->dim())})) return;
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(*in, *out) && !memory_overlaps(*index, *out), Error::InvalidArgument, kName,
                    "out must not share memory with an input");
  const int64_t size = in->dim() > 0 ? in->size(dim) : 1;
  const size_t block = inner * in->element_size();
  const uint8_t* src = in->const_data_ptr<uint8_t>();
  uint8_t* dst = out->mutable_data_ptr<uint8_t>();
  const size_t count = index->numel();
  for (size_t k = 0; k < count; ++k) {
    int64_t at = 0;
    if (!checked_index(ctx, kName, index_at(*index, k), size, false, &at)) return;
    for (size_t o = 0; o < outer; ++o) {
      std::memcpy(dst + (o * count + k) * block, src + (o * static_cast<size_t>(size) + static_cast<size_t>(at)) * block,
                  block);
    }
  }
}

}  // namespace portable
}  // namespace kiln
