// aten::any.all_out(Tensor self, *, Tensor(a!) out)
// aten::any.dims_out(Tensor self, int[1]? dim=None, bool keepdim=False, *, Tensor(a!) out)
// aten::any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out)
//
// True where some reduced element is non-zero (NaN counts); an empty reduction is false.
// out is bool, or uint8 for a uint8 self (PyTorch's rule); other out dtypes get 0/1.
// any.dims reduces every dimension for dim=None but none for dim=[], as in PyTorch.
#include "kernels/portable/util/predicate.h"
#include "kernels/portable/util/reduce.h"

namespace kiln {
namespace portable {

namespace {

void reduce_any(KernelContext& ctx, const char* name, const Tensor& in, Span<const int64_t> dims, bool keepdim,
                Tensor& out) {
  ReducePlan plan;
  if (!plan_reduction(ctx, name, in, dims, keepdim, out, &plan) || !check_truth_out(ctx, name, out)) return;
  const TruthWriter write(out);
  dispatch_dtype<kAllTypes>(ctx, name, in.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const Elements<T> x = elements_of<T>(in);
    for_each_output(plan, [&](size_t oi, size_t base) {
      bool found = false;
      for_each_reduced(plan, base, [&](size_t i) { found = found || x[i] != static_cast<T>(0); });
      write(oi, found);
    });
  });
}

}  // namespace

void any_all_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::any.all_out";
  ArgReader r(ctx, kName, args, 3);
  Tensor* in = r.tensor(0);
  Tensor* out = r.tensor(1);
  if (!r.ok()) return;
  reduce_any(ctx, kName, *in, {}, /*keepdim=*/false, *out);
}

void any_dims_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::any.dims_out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  bool has_dims = false;
  const Span<const int64_t> dims = r.optional_int_list(1, &has_dims);
  const bool keepdim = r.bool_value(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  if (has_dims && dims.empty()) {
    unary_predicate_op(ctx, kName, *in, *out, [](auto x) { return x != static_cast<decltype(x)>(0); });
    return;
  }
  reduce_any(ctx, kName, *in, dims, keepdim, *out);
}

void any_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::any.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  const int64_t dim = r.int_value(1);
  const bool keepdim = r.bool_value(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  const int64_t dims[1] = {dim};
  reduce_any(ctx, kName, *in, {dims, 1u}, keepdim, *out);
}

}  // namespace portable
}  // namespace kiln
