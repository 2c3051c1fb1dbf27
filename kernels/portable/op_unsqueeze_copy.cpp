// aten::unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out)
//
// Inserts a size-1 dimension at `dim` in [-(rank + 1), rank].
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void unsqueeze_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::unsqueeze_copy.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() < kTensorMaxDim, Error::InvalidArgument, kName,
                    "self already has %d dims", static_cast<int>(in->dim()));
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim() + 1, &dim)) return;
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  SizesType sizes[kTensorMaxDim];
  for (int32_t d = 0, k = 0; d <= in->dim(); ++d) sizes[d] = d == dim ? 1 : in->size(k++);
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(in->dim() + 1)})) return;
  copy_all(*in, *out);
}

}  // namespace portable
}  // namespace kiln
