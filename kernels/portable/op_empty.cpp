// aten::empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out)
// dim_order_ops::_empty_dim_order.out(int[] size, *, int[]? dim_order=None, Tensor(a!) out)
//
// out is resized to `size`; its contents are left as they are (uninitialised, as in
// PyTorch). The dim-order overload checks that out has the requested dim order (None:
// contiguous); memory_format is not checked (the planner chose out's layout).
#include "kernels/portable/util/shape_args.h"

namespace kiln {
namespace portable {

void empty_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::empty.out";
  ArgReader r(ctx, kName, args, 4);
  const Span<const int64_t> size = r.int_list(0);
  Tensor* out = r.tensor_any_layout(2);
  if (!r.ok()) return;
  resize_to_size_list(ctx, kName, size, *out);
}

void empty_dim_order_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "dim_order_ops::_empty_dim_order.out";
  ArgReader r(ctx, kName, args, 4);
  const Span<const int64_t> size = r.int_list(0);
  bool has_order = false;
  const Span<const int64_t> dim_order = r.optional_int_list(1, &has_order);
  Tensor* out = r.tensor_any_layout(2);
  if (!r.ok()) return;
  if (has_order) {
    bool match = dim_order.size() == static_cast<size_t>(out->dim());
    for (size_t i = 0; match && i < dim_order.size(); ++i) match = dim_order[i] == out->dim_order()[i];
    KILN_KERNEL_CHECK(ctx, match, Error::InvalidArgument, kName, "dim_order argument differs from out's dim order");
  } else {
    KILN_KERNEL_CHECK(ctx, out->is_contiguous(), Error::InvalidArgument, kName,
                      "dim_order None asks for a contiguous out");
  }
  resize_to_size_list(ctx, kName, size, *out);
}

}  // namespace portable
}  // namespace kiln
