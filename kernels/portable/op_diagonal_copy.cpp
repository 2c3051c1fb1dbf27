// aten::diagonal_copy.out(Tensor self, int offset=0, int dim1=0, int dim2=1, *,
//     Tensor(a!) out)
//
// The diagonal of the (dim1, dim2) planes, offset above (offset > 0) or below it: out
// has self's other dimensions, then one of the diagonal's length (0 when the offset
// leaves the plane).
#include "kernels/portable/util/strided_view.h"

namespace kiln {
namespace portable {

void diagonal_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::diagonal_copy.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const int64_t offset = r.int_value(1);
  const int64_t dim1_arg = r.int_value(2);
  const int64_t dim2_arg = r.int_value(3);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() >= 2, Error::InvalidArgument, kName, "self %s needs at least 2 dims",
                    ShapeString(*in).c_str());
  int32_t dim1 = 0, dim2 = 0;
  if (!normalize_dim(ctx, kName, dim1_arg, in->dim(), &dim1) ||
      !normalize_dim(ctx, kName, dim2_arg, in->dim(), &dim2)) {
    return;
  }
  KILN_KERNEL_CHECK(ctx, dim1 != dim2, Error::InvalidArgument, kName, "dim1 and dim2 are both %d",
                    static_cast<int>(dim1));
  KILN_KERNEL_CHECK(ctx, offset > -INT32_MAX && offset < INT32_MAX, Error::InvalidArgument, kName,
                    "offset %lld is out of range", static_cast<long long>(offset));
  const int64_t rows = in->size(dim1);
  const int64_t cols = in->size(dim2);
  // Diagonal element i is at row i + below, column i + above.
  const int64_t above = offset > 0 ? offset : 0;
  const int64_t below = offset < 0 ? -offset : 0;
  int64_t length = rows - below < cols - above ? rows - below : cols - above;
  if (length < 0) length = 0;
  int64_t sizes[kTensorMaxDim];
  int64_t strides[kTensorMaxDim];
  int32_t rank = 0;
  for (int32_t d = 0; d < in->dim(); ++d) {
    if (d == dim1 || d == dim2) continue;
    sizes[rank] = in->size(d);
    strides[rank++] = in->strides()[d];
  }
  sizes[rank] = length;
  strides[rank++] = in->strides()[dim1] + in->strides()[dim2];
  const int64_t start = length > 0 ? below * in->strides()[dim1] + above * in->strides()[dim2] : 0;
  copy_strided_view(ctx, kName, *in, *out, sizes, strides, rank, start);
}

}  // namespace portable
}  // namespace kiln
