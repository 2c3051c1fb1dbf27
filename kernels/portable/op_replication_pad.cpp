// aten::replication_pad1d.out(Tensor self, SymInt[2] padding, *, Tensor(a!) out)
// aten::replication_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out)
// aten::replication_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out)
//
// F.pad(mode="replicate") over the last 1, 2 or 3 dims: the edge element repeated
// (util/mapped_pad.h).
#include "kernels/portable/util/mapped_pad.h"

namespace kiln {
namespace portable {

void replication_pad1d_out(KernelContext& ctx, Span<EValue*> args) {
  mapped_pad_kernel(ctx, "aten::replication_pad1d.out", args, 1, PadMode::kReplicate);
}

void replication_pad2d_out(KernelContext& ctx, Span<EValue*> args) {
  mapped_pad_kernel(ctx, "aten::replication_pad2d.out", args, 2, PadMode::kReplicate);
}

void replication_pad3d_out(KernelContext& ctx, Span<EValue*> args) {
  mapped_pad_kernel(ctx, "aten::replication_pad3d.out", args, 3, PadMode::kReplicate);
}

}  // namespace portable
}  // namespace kiln
