// aten::view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out)
//
// Same elements in a new shape (one size may be -1); the data is copied unless out
// already shares self's memory.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/shape_args.h"

namespace kiln {
namespace portable {

void view_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::view_copy.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> size = r.int_list(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  SizesType sizes[kTensorMaxDim];
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out") ||
      !sizes_from_list(ctx, kName, size, true, in->numel(), sizes) ||
      !resize_output(ctx, kName, *out, {sizes, size.size()})) {
    return;
  }
  copy_all(*in, *out);
}

}  // namespace portable
}  // namespace kiln
