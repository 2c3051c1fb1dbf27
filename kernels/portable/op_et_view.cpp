// executorch_prim::et_view.default(Tensor self, SymInt[] size) -> Tensor
//
// Arguments [self, size, out]. An aliasing view: out (which has no memory of its own)
// is resized and pointed at self's data. Emitted for views whose shape is only known
// at run time.
#include "kernels/portable/util/shape_args.h"

namespace kiln {
namespace portable {

void et_view_default(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "executorch_prim::et_view.default";
  ArgReader r(ctx, kName, args, 3);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> size = r.int_list(1);
  if (!r.ok()) return;
  // out's data pointer is set here, so it is not required to have data yet.
  KILN_KERNEL_CHECK(ctx, args[2] != nullptr && args[2]->is_tensor(), Error::InvalidType, kName,
                    "argument 2 (out) is %s, expected Tensor",
                    args[2] != nullptr ? tag_name(args[2]->tag()) : "missing");
  Tensor& out = args[2]->to_tensor();
  SizesType sizes[kTensorMaxDim];
  if (!check_same_dtype(ctx, kName, *in, out, "self", "out") ||
      !sizes_from_list(ctx, kName, size, true, in->numel(), sizes) ||
      !resize_output(ctx, kName, out, {sizes, size.size()})) {
    return;
  }
  out.set_data(in->mutable_data_ptr());
}

}  // namespace portable
}  // namespace kiln
