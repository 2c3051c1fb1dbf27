// aten::var_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None,
//     bool keepdim=False, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))
//
// The variance (out0, with Bessel's correction; None means 1) and the mean (out1) over
// dim (None or [] for every dimension). Floating point.
#include "kernels/portable/util/variance.h"

namespace kiln {
namespace portable {

void var_mean_correction_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::var_mean.correction_out";
  ArgReader r(ctx, kName, args, 7);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> dims = r.optional_int_list(1);
  const double correction = r.optional_scalar(2, 1.0);
  const bool keepdim = r.bool_value(3);
  Tensor* var = r.tensor(4);
  Tensor* mean = r.tensor(5);
  if (!r.ok()) return;
  variance_into(ctx, kName, *in, dims, correction, keepdim, *var, mean);
}

}  // namespace portable
}  // namespace kiln
