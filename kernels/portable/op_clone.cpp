// aten::clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out)
//
// memory_format may be None, contiguous (0) or preserve (1): out's own dim order
// decides the layout, so both are a copy into out.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void clone_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::clone.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor_any_layout(0);
  const int64_t memory_format = r.optional_int(1, 0);
  Tensor* out = r.tensor_any_layout(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, memory_format == 0 || memory_format == 1, Error::NotSupported, kName,
                    "memory_format %lld is not supported (None, contiguous, preserve)",
                    static_cast<long long>(memory_format));
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out") ||
      !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  convert_copy(*in, *out);
}

}  // namespace portable
}  // namespace kiln
