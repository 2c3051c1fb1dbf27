// aten::_to_copy.out(Tensor self, *, bool non_blocking=False, MemoryFormat? memory_format=None,
//     Tensor(a!) out)
//
// A dtype conversion: out's dtype is the target (float -> int truncates toward zero,
// anything -> bool is "!= 0", as in PyTorch).
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void to_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::_to_copy.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor_any_layout(0);
  const int64_t memory_format = r.optional_int(2, 0);
  Tensor* out = r.tensor_any_layout(3);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, memory_format == 0 || memory_format == 1, Error::NotSupported, kName,
                    "memory_format %lld is not supported (None, contiguous, preserve)",
                    static_cast<long long>(memory_format));
  if (!resize_output_like(ctx, kName, *out, *in)) return;
  KILN_KERNEL_CHECK(ctx, convert_copy(*in, *out), Error::InvalidType, kName,
                    "cannot convert %s to %s", scalar_type_name(in->scalar_type()),
                    scalar_type_name(out->scalar_type()));
}

}  // namespace portable
}  // namespace kiln
