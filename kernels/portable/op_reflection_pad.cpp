// aten::reflection_pad1d.out(Tensor self, SymInt[2] padding, *, Tensor(a!) out)
// aten::reflection_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out)
// aten::reflection_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out)
//
// F.pad(mode="reflect") over the last 1, 2 or 3 dims: the border mirrored without
// repeating the edge element; each padding must be smaller than its dim
// (util/mapped_pad.h).
#include "kernels/portable/util/mapped_pad.h"

namespace kiln {
namespace portable {

void reflection_pad1d_out(KernelContext& ctx, Span<EValue*> args) {
  mapped_pad_kernel(ctx, "aten::reflection_pad1d.out", args, 1, PadMode::kReflect);
}

void reflection_pad2d_out(KernelContext& ctx, Span<EValue*> args) {
  mapped_pad_kernel(ctx, "aten::reflection_pad2d.out", args, 2, PadMode::kReflect);
}

void reflection_pad3d_out(KernelContext& ctx, Span<EValue*> args) {
  mapped_pad_kernel(ctx, "aten::reflection_pad3d.out", args, 3, PadMode::kReflect);
}

}  // namespace portable
}  // namespace kiln
