// aten::_conj_physical.out(Tensor self, *, Tensor(a!) out)
//
// The complex conjugate, materialized. Kiln has no complex dtypes (its runtime's
// ScalarType stops at the real and quantized ones), and the conjugate of a real tensor
// is the tensor itself, so this kernel is a copy of any real or bool dtype, as PyTorch
// gives for real tensors.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

void conj_physical_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::_conj_physical.out";
  ArgReader r(ctx, kName, args, 3);
  Tensor* in = r.tensor(0);
  Tensor* out = r.tensor(1);
  if (!r.ok()) return;
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out") ||
      !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  KILN_KERNEL_CHECK(ctx, is_computable_type(in->scalar_type()), Error::InvalidType, kName,
                    "dtype %s is not supported", scalar_type_name(in->scalar_type()));
  copy_all(*in, *out);
}

}  // namespace portable
}  // namespace kiln
