// et_copy::_h2d_copy.out(Tensor self, *, Tensor(a!) out)
// et_copy::_d2h_copy.out(Tensor self, *, Tensor(a!) out)
//
// ExecuTorch's host-to-device and device-to-host copies. The portable library runs on
// the CPU, whose memory both sides share, so each is a plain copy.
#include "kernels/portable/util/identity_copy.h"

namespace kiln {
namespace portable {

void h2d_copy_out(KernelContext& ctx, Span<EValue*> args) {
  identity_copy(ctx, "et_copy::_h2d_copy.out", args);
}

void d2h_copy_out(KernelContext& ctx, Span<EValue*> args) {
  identity_copy(ctx, "et_copy::_d2h_copy.out", args);
}

}  // namespace portable
}  // namespace kiln
