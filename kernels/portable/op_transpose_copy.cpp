// aten::transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!) out)
// aten::t_copy.out(Tensor self, *, Tensor(a!) out)
//
// transpose swaps two dimensions (negative dims count from the end); t is transpose
// of a matrix and the identity for tensors of rank 0 or 1.
#include "kernels/portable/util/strided_view.h"

namespace kiln {
namespace portable {

namespace {

void transpose(KernelContext& ctx, const char* name, const Tensor& in, int32_t dim0, int32_t dim1, Tensor& out) {
  int64_t sizes[kTensorMaxDim];
  int64_t strides[kTensorMaxDim];
  sizes_and_strides(in, sizes, strides);
  if (in.dim() > 0) {
    const int64_t size = sizes[dim0], stride = strides[dim0];
    sizes[dim0] = sizes[dim1];
    strides[dim0] = strides[dim1];
    sizes[dim1] = size;
    strides[dim1] = stride;
  }
  copy_strided_view(ctx, name, in, out, sizes, strides, in.dim(), 0);
}

}  // namespace

void transpose_copy_int_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::transpose_copy.int_out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  const int64_t dim0_arg = r.int_value(1);
  const int64_t dim1_arg = r.int_value(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  int32_t dim0 = 0, dim1 = 0;
  if (!normalize_dim(ctx, kName, dim0_arg, in->dim(), &dim0) ||
      !normalize_dim(ctx, kName, dim1_arg, in->dim(), &dim1)) {
    return;
  }
  transpose(ctx, kName, *in, dim0, dim1, *out);
}

void t_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::t_copy.out";
  ArgReader r(ctx, kName, args, 3);
  Tensor* in = r.tensor(0);
  Tensor* out = r.tensor(1);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() <= 2, Error::InvalidArgument, kName, "self %s has more than 2 dims",
                    ShapeString(*in).c_str());
  transpose(ctx, kName, *in, 0, in->dim() == 2 ? 1 : 0, *out);
}

}  // namespace portable
}  // namespace kiln
