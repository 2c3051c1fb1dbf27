// aten::nonzero.out(Tensor self, *, Tensor(a!) out)
//
// The coordinates of self's nonzero elements (NaN counts as nonzero), one row each in
// row-major order: out is Long [count, rank], its length depends on the data.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

void nonzero_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::nonzero.out";
  ArgReader r(ctx, kName, args, 3);
  Tensor* in = r.tensor(0);
  Tensor* out = r.tensor(1);
  if (!r.ok() || !check_dtype(ctx, kName, *out, ScalarType::Long, "out")) return;
  dispatch_dtype<kAllTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in->const_data_ptr<T>();
    size_t count = 0;
    for (size_t i = 0; i < in->numel(); ++i) count += x[i] != T{} ? 1 : 0;
    KILN_KERNEL_CHECK(ctx, count <= INT32_MAX, Error::InvalidArgument, kName, "too many nonzero elements");
    const SizesType sizes[2] = {static_cast<SizesType>(count), static_cast<SizesType>(in->dim())};
    if (!resize_output(ctx, kName, *out, {sizes, 2})) return;
    KILN_KERNEL_CHECK(ctx, !memory_overlaps(*in, *out), Error::InvalidArgument, kName, "out must not share memory with self");
    int64_t* o = out->mutable_data_ptr<int64_t>();
    int64_t counter[kTensorMaxDim] = {};
    const int32_t rank = in->dim();
    size_t row = 0;
    for (size_t i = 0; i < in->numel() && row < count; ++i) {
      if (x[i] != T{}) {
        for (int32_t d = 0; d < rank; ++d) o[row * static_cast<size_t>(rank) + static_cast<size_t>(d)] = counter[d];
        ++row;
      }
      for (int32_t d = rank - 1; d >= 0 && ++counter[d] == in->size(d); --d) counter[d] = 0;
    }
  });
}

}  // namespace portable
}  // namespace kiln
