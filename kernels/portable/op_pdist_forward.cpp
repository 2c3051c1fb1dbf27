// aten::_pdist_forward.out(Tensor self, float p=2., *, Tensor(a!) out)
//
// The p-norm distance between every pair of rows i < j of self [N, M], in row-major
// pair order: out is [N * (N - 1) / 2].
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/p_norm_distance.h"

namespace kiln {
namespace portable {

void pdist_forward_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::_pdist_forward.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const double p = r.double_value(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() == 2, Error::InvalidArgument, kName, "self must be 2-D, got %s",
                    ShapeString(*in).c_str());
  KILN_KERNEL_CHECK(ctx, p >= 0, Error::InvalidArgument, kName, "p %g must be >= 0", p);
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  const int64_t n = in->size(0);
  const size_t m = static_cast<size_t>(in->size(1));
  KILN_KERNEL_CHECK(ctx, n * (n - 1) / 2 <= INT32_MAX, Error::InvalidArgument, kName, "too many rows (%lld)",
                    static_cast<long long>(n));
  const SizesType pairs = static_cast<SizesType>(n > 1 ? n * (n - 1) / 2 : 0);
  if (!resize_output(ctx, kName, *out, {&pairs, 1})) return;
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in->const_data_ptr<T>();
    T* o = out->mutable_data_ptr<T>();
    size_t k = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) {
        o[k++] = p_norm_distance(x + static_cast<size_t>(i) * m, x + static_cast<size_t>(j) * m, m, p);
      }
    }
  });
}

}  // namespace portable
}  // namespace kiln
