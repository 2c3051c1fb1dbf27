// aten::sym_size.int(Tensor self, int dim) -> SymInt     arguments [self, dim, out]
// aten::sym_numel(Tensor self) -> SymInt                 arguments [self, out]
//
// Read a tensor's current (possibly dynamic) size into an Int value.
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void sym_size_int(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::sym_size.int";
  ArgReader r(ctx, kName, args, 3);
  Tensor* in = r.tensor_any_layout(0);
  const int64_t dim_arg = r.int_value(1);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim)) return;
  KILN_KERNEL_CHECK(ctx, in->dim() > 0 && args[2] != nullptr, Error::InvalidArgument, kName,
                    "a 0-dim tensor has no sizes");
  *args[2] = EValue(static_cast<int64_t>(in->size(dim)));
}

void sym_numel(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::sym_numel";
  ArgReader r(ctx, kName, args, 2);
  Tensor* in = r.tensor_any_layout(0);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, args[1] != nullptr, Error::InvalidArgument, kName, "missing out value");
  *args[1] = EValue(static_cast<int64_t>(in->numel()));
}

}  // namespace portable
}  // namespace kiln
