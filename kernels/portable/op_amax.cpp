// aten::amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out)
//
// dim [] reduces everything. NaN propagates, as in PyTorch.
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/reduce.h"

namespace kiln {
namespace portable {

void amax_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::amax.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> dims = r.int_list(1);
  const bool keepdim = r.bool_value(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  ReducePlan plan;
  if (!make_reduce_plan(ctx, kName, *in, dims, keepdim, &plan) ||
      !resize_output(ctx, kName, *out, {plan.out_sizes, static_cast<size_t>(plan.out_rank)})) {
    return;
  }
  KILN_KERNEL_CHECK(ctx, plan.reduce_count > 0 || out->numel() == 0, Error::InvalidArgument, kName,
                    "cannot take the maximum of an empty dimension of %s", ShapeString(*in).c_str());
  dispatch_dtype<kAllTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in->const_data_ptr<T>();
    T* o = out->mutable_data_ptr<T>();
    for_each_output(plan, [&](size_t oi, size_t base) {
      bool first = true;
      T best = T{};
      for_each_reduced(plan, base, [&](size_t i) {
        const T v = x[i];
        if (first) {
          best = v;
          first = false;
        } else if (best == best && (v > best || v != v)) {  // once NaN, stays NaN
          best = v;
        }
      });
      o[oi] = best;
    });
  });
}

}  // namespace portable
}  // namespace kiln
