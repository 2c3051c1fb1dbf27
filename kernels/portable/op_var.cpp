// aten::var.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None,
//     bool keepdim=False, Tensor(a!) out)
// aten::var.out(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False, *,
//     Tensor(a!) out)
//
// The variance over dim (None or [] for every dimension) with Bessel's correction
// (correction None means 1; unbiased=False means 0). Floating point.
#include "kernels/portable/util/variance.h"

namespace kiln {
namespace portable {

void var_correction_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::var.correction_out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> dims = r.optional_int_list(1);
  const double correction = r.optional_scalar(2, 1.0);
  const bool keepdim = r.bool_value(3);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  variance_into(ctx, kName, *in, dims, correction, keepdim, *out, nullptr);
}

void var_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::var.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> dims = r.optional_int_list(1);
  const bool unbiased = r.bool_value(2);
  const bool keepdim = r.bool_value(3);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  variance_into(ctx, kName, *in, dims, unbiased ? 1.0 : 0.0, keepdim, *out, nullptr);
}

}  // namespace portable
}  // namespace kiln
