// aten::cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out)
//
// Running sums along dim. Each element is first converted to out's dtype (integer and
// bool inputs give int64 unless dtype says otherwise), then accumulated in double for
// floats (as PyTorch's CPU kernel does) or wrapping int64 for integers.
#include <type_traits>

#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/reduce.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

void cumsum_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::cumsum.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  bool has_dtype = false;
  const int64_t dtype = r.optional_int(2, 0, &has_dtype);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim) ||
      !check_dtype_argument(ctx, kName, has_dtype, dtype, *out) || !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  KILN_KERNEL_CHECK(ctx, is_computable_type(in->scalar_type()) && can_cast(in->scalar_type(), out->scalar_type()),
                    Error::InvalidType, kName, "cannot sum %s into a %s out", scalar_type_name(in->scalar_type()),
                    scalar_type_name(out->scalar_type()));
  // Contiguous layout as [outer, length, inner]: the running sum walks `length` with stride `inner`.
  size_t outer = 1;
  size_t inner = 1;
  for (int32_t d = 0; d < dim; ++d) outer *= static_cast<size_t>(in->size(d));
  for (int32_t d = dim + 1; d < in->dim(); ++d) inner *= static_cast<size_t>(in->size(d));
  const size_t length = in->dim() == 0 ? 1 : static_cast<size_t>(in->size(dim));
  dispatch_dtype<kRealTypes>(ctx, kName, out->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    T* o = out->mutable_data_ptr<T>();
    const ScalarType in_type = in->scalar_type();
    const void* x = in->const_data_ptr();
    for (size_t p = 0; p < outer; ++p) {
      for (size_t k = 0; k < inner; ++k) {
        Acc acc = 0;
        for (size_t j = 0; j < length; ++j) {
          const size_t i = (p * length + j) * inner + k;
          acc = wrap_add(acc, static_cast<Acc>(load_as<T>(in_type, x, i)));
          o[i] = static_cast<T>(acc);
        }
      }
    }
  });
}

}  // namespace portable
}  // namespace kiln
