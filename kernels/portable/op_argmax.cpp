// aten::argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out)
//
// dim None: the index into the flattened tensor. The first maximum wins; NaN counts
// as the maximum (PyTorch's rule). out is Long.
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/reduce.h"

namespace kiln {
namespace portable {

void argmax_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::argmax.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  bool has_dim = false;
  const int64_t dim = r.optional_int(1, 0, &has_dim);
  const bool keepdim = r.bool_value(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  if (!check_dtype(ctx, kName, *out, ScalarType::Long, "out")) return;
  ReducePlan plan;
  const int64_t dims[1] = {dim};
  if (!make_reduce_plan(ctx, kName, *in, {dims, has_dim ? 1u : 0u}, keepdim, &plan)) return;
  // Without dim, PyTorch returns a 0-dim tensor (keepdim keeps every dim as 1).
  const size_t out_rank = has_dim || keepdim ? static_cast<size_t>(plan.out_rank) : 0;
  if (!resize_output(ctx, kName, *out, {plan.out_sizes, out_rank})) return;
  KILN_KERNEL_CHECK(ctx, plan.reduce_count > 0, Error::InvalidArgument, kName,
                    "cannot take the argmax of an empty dimension of %s", ShapeString(*in).c_str());
  dispatch_dtype<kRealTypes | kBoolType>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in->const_data_ptr<T>();
    int64_t* o = out->mutable_data_ptr<int64_t>();
    for_each_output(plan, [&](size_t oi, size_t base) {
      int64_t k = 0;
      int64_t best_k = 0;
      T best = T{};
      bool best_is_nan = false;
      for_each_reduced(plan, base, [&](size_t i) {
        const T v = x[i];
        if (!best_is_nan && (k == 0 || v > best || v != v)) {
          best = v;
          best_k = k;
          best_is_nan = v != v;
        }
        ++k;
      });
      o[oi] = best_k;
    });
  });
}

}  // namespace portable
}  // namespace kiln
