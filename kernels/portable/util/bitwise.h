// Shared bodies of the bitwise kernels (and, or, xor, shifts): integer dtypes, and bool
// where the op allows it, as in PyTorch; float tensors or scalars fail with InvalidType.
#pragma once

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

/// Arguments [self, other, out, out]: out = op(self, other), broadcast, computed in
/// out's dtype (which must be in Set).
template <uint32_t Set, typename Op>
void bitwise_tensor_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, Op op) {
  ArgReader r(ctx, name, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  binary_op<Set>(ctx, name, *a, *b, *out, op);
}

/// Arguments [self, other (an integral Scalar), out, out]: out = op(self, other), the
/// scalar converted to out's dtype (integers wrap, as in PyTorch).
template <uint32_t Set, typename Op>
void bitwise_scalar_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, Op op) {
  ArgReader r(ctx, name, args, 4);
  Tensor* a = r.tensor(0);
  const ScalarArg other = r.scalar_arg(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, other.integral, Error::InvalidType, name, "other must be an integer or bool, got %g",
                    other.real);
  unary_op<Set>(ctx, name, *a, *out, [&op, other](auto x) {
    using T = decltype(x);
    return op(x, other.as<T>());
  });
}

}  // namespace portable
}  // namespace kiln
