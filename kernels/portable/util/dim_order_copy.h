// The shared body of ExecuTorch's dim-order copy ops (_to_dim_order_copy.out and
// _clone_dim_order.out): both take (self, *, non_blocking, dim_order?, out, ret).
#pragma once

#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

/// Copies self into out, whose dim order must be the one requested (None means
/// contiguous). `allow_dtype_change` is false for clone, which keeps the dtype.
inline void dim_order_copy(KernelContext& ctx, Span<EValue*> args, const char* name,
                           bool allow_dtype_change) {
  ArgReader r(ctx, name, args, 5);
  Tensor* in = r.tensor_any_layout(0);
  bool has_order = false;
  const Span<const int64_t> dim_order = r.optional_int_list(2, &has_order);
  Tensor* out = r.tensor_any_layout(3);
  if (!r.ok()) return;
  if (has_order) {
    bool match = dim_order.size() == static_cast<size_t>(out->dim());
    for (size_t i = 0; match && i < dim_order.size(); ++i) match = dim_order[i] == out->dim_order()[i];
    KILN_KERNEL_CHECK(ctx, match, Error::InvalidArgument, name,
                      "dim_order argument differs from out's dim order");
  } else {
    KILN_KERNEL_CHECK(ctx, out->is_contiguous(), Error::InvalidArgument, name,
                      "dim_order None asks for a contiguous out");
  }
  KILN_KERNEL_CHECK(ctx, allow_dtype_change || in->scalar_type() == out->scalar_type(),
                    Error::InvalidType, name, "clone from %s to %s changes the dtype",
                    scalar_type_name(in->scalar_type()), scalar_type_name(out->scalar_type()));
  if (!resize_output_like(ctx, name, *out, *in)) return;
  KILN_KERNEL_CHECK(ctx, convert_copy(*in, *out), Error::InvalidType, name,
                    "cannot convert %s to %s", scalar_type_name(in->scalar_type()),
                    scalar_type_name(out->scalar_type()));
}

}  // namespace portable
}  // namespace kiln
