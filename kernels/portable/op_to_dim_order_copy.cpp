// dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False,
//     int[]? dim_order=None, Tensor(a!) out)
//
// ExecuTorch's form of .to() / .contiguous(): converts the dtype and the dim order
// (e.g. channels-last [0, 2, 3, 1] to contiguous) into out, whose dim order must be the
// one requested (None means contiguous).
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void to_dim_order_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "dim_order_ops::_to_dim_order_copy.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor_any_layout(0);
  bool has_order = false;
  const Span<const int64_t> dim_order = r.optional_int_list(2, &has_order);
  Tensor* out = r.tensor_any_layout(3);
  if (!r.ok()) return;
  if (has_order) {
    bool match = dim_order.size() == static_cast<size_t>(out->dim());
    for (size_t i = 0; match && i < dim_order.size(); ++i) match = dim_order[i] == out->dim_order()[i];
    KILN_KERNEL_CHECK(ctx, match, Error::InvalidArgument, kName,
                      "dim_order argument differs from out's dim order");
  } else {
    KILN_KERNEL_CHECK(ctx, out->is_contiguous(), Error::InvalidArgument, kName,
                      "dim_order None asks for a contiguous out");
  }
  if (!resize_output_like(ctx, kName, *out, *in)) return;
  KILN_KERNEL_CHECK(ctx, convert_copy(*in, *out), Error::InvalidType, kName,
                    "cannot convert %s to %s", scalar_type_name(in->scalar_type()),
                    scalar_type_name(out->scalar_type()));
}

}  // namespace portable
}  // namespace kiln
