// The body of the copy kernels whose result equals their input: (Tensor self, *, out).
// alias_copy, detach_copy, lift_fresh_copy and ExecuTorch's host/device copies all
// reduce to this on a CPU with one memory.
#pragma once

#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

inline void identity_copy(KernelContext& ctx, const char* name, Span<EValue*> args) {
  ArgReader r(ctx, name, args, 3);
  Tensor* in = r.tensor(0);
  Tensor* out = r.tensor(1);
  if (!r.ok()) return;
  if (!check_same_dtype(ctx, name, *in, *out, "self", "out") || !resize_output_like(ctx, name, *out, *in)) {
    return;
  }
  copy_all(*in, *out);
}

}  // namespace portable
}  // namespace kiln
