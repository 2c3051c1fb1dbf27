// aten::cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out)
//
// Inputs must share every size except `dim`. 1-D empty tensors ([0]) are skipped, as
// PyTorch does for legacy reasons. Inputs of mixed dtypes (torch.cat promotes them) are
// converted to out's dtype; same-dtype inputs are copied row by row with memcpy.
#include <cstring>

#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {
bool is_legacy_empty(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }
}  // namespace

void cat_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::cat.out";
  ArgReader r(ctx, kName, args, 4);
  const Span<Tensor* const> tensors = r.tensor_list(0);
  const int64_t dim_arg = r.int_value(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, !tensors.empty(), Error::InvalidArgument, kName, "no tensors to concatenate");
  const Tensor* ref = nullptr;  // the first non-skipped input fixes the other sizes
  for (Tensor* t : tensors) {
    if (!is_legacy_empty(*t)) {
      ref = t;
      break;
    }
  }
  if (ref == nullptr) ref = tensors[0];
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, ref->dim(), &dim)) return;
  KILN_KERNEL_CHECK(ctx, ref->dim() > 0, Error::InvalidArgument, kName, "cannot concatenate 0-dim tensors");
  SizesType sizes[kTensorMaxDim];
  for (int32_t d = 0; d < ref->dim(); ++d) sizes[d] = d == dim ? 0 : ref->size(d);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i];
    KILN_KERNEL_CHECK(ctx, can_cast(t.scalar_type(), out->scalar_type()), Error::InvalidType, kName,
                      "input %zu has dtype %s, which cannot be written to a %s out", i,
                      scalar_type_name(t.scalar_type()), scalar_type_name(out->scalar_type()));
    if (is_legacy_empty(t) && &t != ref) continue;
    bool match = t.dim() == ref->dim();
    for (int32_t d = 0; match && d < t.dim(); ++d) match = d == dim || t.size(d) == ref->size(d);
    KILN_KERNEL_CHECK(ctx, match, Error::InvalidArgument, kName,
                      "input %zu has shape %s, incompatible with %s along dim %d", i,
                      ShapeString(t).c_str(), ShapeString(*ref).c_str(), static_cast<int>(dim));
    sizes[dim] += t.size(dim);
  }
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(ref->dim())})) return;
  // View every tensor as [outer, size(dim) * inner]: out rows interleave the inputs' rows.
  size_t outer = 1;
  size_t inner = 1;
  for (int32_t d = 0; d < ref->dim(); ++d) {
    if (d < dim) outer *= static_cast<size_t>(sizes[d]);
    if (d > dim) inner *= static_cast<size_t>(sizes[d]);
  }
  const size_t esize = out->element_size();
  const size_t out_row = static_cast<size_t>(sizes[dim]) * inner * esize;
  uint8_t* dst = out->mutable_data_ptr<uint8_t>();
  size_t column = 0;
  for (Tensor* t : tensors) {
    if (is_legacy_empty(*t) && t != ref) continue;
    KILN_KERNEL_CHECK(ctx, t->numel() == 0 || t->const_data_ptr() != out->const_data_ptr(),
                      Error::InvalidArgument, kName, "out must not share memory with an input");
    const size_t row_elements = static_cast<size_t>(t->size(dim)) * inner;
    const size_t row = row_elements * esize;
    if (t->scalar_type() == out->scalar_type()) {
      const uint8_t* src = t->const_data_ptr<uint8_t>();
      for (size_t o = 0; o < outer && row > 0; ++o) {
        std::memcpy(dst + o * out_row + column, src + o * row, row);
      }
    } else if (row > 0 && outer > 0) {
      // The input as [outer, row_elements] into out's rows, converting each element.
      const int64_t sizes2[2] = {static_cast<int64_t>(outer), static_cast<int64_t>(row_elements)};
      const int64_t src_strides[2] = {static_cast<int64_t>(row_elements), 1};
      const int64_t dst_strides[2] = {static_cast<int64_t>(out_row / esize), 1};
      KILN_KERNEL_CHECK(ctx,
                        strided_cast_copy(t->const_data_ptr(), t->scalar_type(), src_strides,
                                          dst + column, out->scalar_type(), dst_strides, sizes2, 2),
                        Error::InvalidType, kName, "cannot convert %s to %s",
                        scalar_type_name(t->scalar_type()), scalar_type_name(out->scalar_type()));
    }
    column += row;
  }
}

}  // namespace portable
}  // namespace kiln
