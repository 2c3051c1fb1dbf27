// aten::glu.out(Tensor self, int dim=-1, *, Tensor(a!) out)
//
// Gated linear unit: self is split in two halves along dim, out = first * sigmoid(second).
// The halved dimension must be even; floating point only, as in PyTorch.
#include <cmath>

#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

void glu_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::glu.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() > 0, Error::InvalidArgument, kName, "self must have a dimension to halve");
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim) ||
      !check_same_dtype(ctx, kName, *in, *out, "self", "out")) {
    return;
  }
  const int64_t size = in->size(dim);
  KILN_KERNEL_CHECK(ctx, size % 2 == 0, Error::InvalidArgument, kName,
                    "dimension %d of %s has odd size %lld", static_cast<int>(dim), ShapeString(*in).c_str(),
                    static_cast<long long>(size));
  SizesType sizes[kTensorMaxDim];
  for (int32_t d = 0; d < in->dim(); ++d) sizes[d] = in->size(d);
  sizes[dim] = static_cast<SizesType>(size / 2);
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(in->dim())})) return;
  size_t outer = 1;
  size_t inner = 1;
  for (int32_t d = 0; d < dim; ++d) outer *= static_cast<size_t>(in->size(d));
  for (int32_t d = dim + 1; d < in->dim(); ++d) inner *= static_cast<size_t>(in->size(d));
  const size_t half = static_cast<size_t>(size / 2) * inner;  // elements of one half, per outer index
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in->const_data_ptr<T>();
    T* o = out->mutable_data_ptr<T>();
    for (size_t p = 0; p < outer; ++p) {
      const T* first = x + p * 2 * half;
      const T* second = first + half;
      T* dst = o + p * half;
      for (size_t i = 0; i < half; ++i) {
        const T gate = static_cast<T>(1) / (static_cast<T>(1) + std::exp(-second[i]));  // sigmoid
        dst[i] = first[i] * gate;
      }
    }
  });
}

}  // namespace portable
}  // namespace kiln
