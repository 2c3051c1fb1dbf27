// aten::squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out)
// aten::squeeze_copy.dim_out(Tensor self, int dim, *, Tensor(a!) out)
//
// Removes the listed dimensions that have size 1 (others stay, as in PyTorch).
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

void squeeze(KernelContext& ctx, const char* name, const Tensor& in, Span<const int64_t> dims, Tensor& out) {
  if (!check_same_dtype(ctx, name, in, out, "self", "out")) return;
  bool listed[kTensorMaxDim] = {};
  for (int64_t d : dims) {
    int32_t nd = 0;
    if (!normalize_dim(ctx, name, d, in.dim(), &nd)) return;
    if (in.dim() > 0) listed[nd] = true;
  }
  SizesType sizes[kTensorMaxDim];
  int32_t rank = 0;
  for (int32_t d = 0; d < in.dim(); ++d) {
    if (listed[d] && in.size(d) == 1) continue;
    sizes[rank++] = in.size(d);
  }
  if (!resize_output(ctx, name, out, {sizes, static_cast<size_t>(rank)})) return;
  copy_all(in, out);
}

}  // namespace

void squeeze_copy_dims_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::squeeze_copy.dims_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> dims = r.int_list(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  squeeze(ctx, kName, *in, dims, *out);
}

void squeeze_copy_dim_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::squeeze_copy.dim_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const int64_t dim = r.int_value(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  squeeze(ctx, kName, *in, {&dim, 1}, *out);
}

}  // namespace portable
}  // namespace kiln
