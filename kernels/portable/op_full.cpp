// aten::full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out)
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/shape_args.h"

namespace kiln {
namespace portable {

void full_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::full.out";
  ArgReader r(ctx, kName, args, 4);
  const Span<const int64_t> size = r.int_list(0);
  const double value = r.scalar(1);
  // An integral fill value keeps full int64 precision.
  const bool integral = args.size() == 4 && args[1] != nullptr && args[1]->is_int();
  const int64_t int_value = integral ? args[1]->to_int() : 0;
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  SizesType sizes[kTensorMaxDim];
  if (!sizes_from_list(ctx, kName, size, false, 0, sizes) ||
      !resize_output(ctx, kName, *out, {sizes, size.size()})) {
    return;
  }
  dispatch_dtype<kAllTypes>(ctx, kName, out->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T v = integral ? static_cast<T>(int_value) : static_cast<T>(value);
    T* o = out->mutable_data_ptr<T>();
    for (size_t i = 0; i < out->numel(); ++i) o[i] = v;
  });
}

}  // namespace portable
}  // namespace kiln
