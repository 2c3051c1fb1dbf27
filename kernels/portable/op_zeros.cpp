// aten::zeros.out(SymInt[] size, *, Tensor(a!) out)
// aten::ones.out(SymInt[] size, *, Tensor(a!) out)
//
// out is resized to `size` and filled; zeros clears the bytes, so every dtype works.
#include <cstring>

#include "kernels/portable/util/scalar_fill.h"
#include "kernels/portable/util/shape_args.h"

namespace kiln {
namespace portable {

void zeros_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::zeros.out";
  ArgReader r(ctx, kName, args, 3);
  const Span<const int64_t> size = r.int_list(0);
  Tensor* out = r.tensor(1);
  if (!r.ok() || !resize_to_size_list(ctx, kName, size, *out)) return;
  if (out->nbytes() > 0) std::memset(out->mutable_data_ptr(), 0, out->nbytes());
}

void ones_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::ones.out";
  ArgReader r(ctx, kName, args, 3);
  const Span<const int64_t> size = r.int_list(0);
  Tensor* out = r.tensor(1);
  if (!r.ok() || !resize_to_size_list(ctx, kName, size, *out)) return;
  ScalarArg one;
  one.integral = true;
  one.integer = 1;
  one.real = 1.0;
  fill_scalar(ctx, kName, *out, one);
}

}  // namespace portable
}  // namespace kiln
