// aten::prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None,
//     Tensor(a!) out)
// aten::prod.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out)
//
// The product along dim (int_out) or of every element (out, 0-dim). Computed in out's
// dtype, as PyTorch does: integer and bool inputs give an int64 out unless dtype says
// otherwise, integers wrap, floats overflow to inf. An empty product is 1.
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/reduce.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

namespace {

void prod_into(KernelContext& ctx, const char* name, const Tensor& in, Span<const int64_t> dims, bool keepdim,
               bool has_dtype, int64_t dtype, Tensor& out) {
  if (!check_dtype_argument(ctx, name, has_dtype, dtype, out)) return;
  KILN_KERNEL_CHECK(ctx, is_computable_type(in.scalar_type()) && can_cast(in.scalar_type(), out.scalar_type()),
                    Error::InvalidType, name, "cannot multiply %s into a %s out",
                    scalar_type_name(in.scalar_type()), scalar_type_name(out.scalar_type()));
  ReducePlan plan;
  if (!plan_reduction(ctx, name, in, dims, keepdim, out, &plan)) return;
  dispatch_dtype<kRealTypes>(ctx, name, out.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.mutable_data_ptr<T>();
    const ScalarType in_type = in.scalar_type();
    const void* x = in.const_data_ptr();
    for_each_output(plan, [&](size_t oi, size_t base) {
      T acc = 1;
      for_each_reduced(plan, base, [&](size_t i) { acc = wrap_mul(acc, load_as<T>(in_type, x, i)); });
      o[oi] = acc;
    });
  });
}

}  // namespace

void prod_int_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::prod.int_out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const int64_t dim = r.int_value(1);
  const bool keepdim = r.bool_value(2);
  bool has_dtype = false;
  const int64_t dtype = r.optional_int(3, 0, &has_dtype);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  const int64_t dims[1] = {dim};
  prod_into(ctx, kName, *in, {dims, 1u}, keepdim, has_dtype, dtype, *out);
}

void prod_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::prod.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  bool has_dtype = false;
  const int64_t dtype = r.optional_int(1, 0, &has_dtype);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  prod_into(ctx, kName, *in, {}, /*keepdim=*/false, has_dtype, dtype, *out);
}

}  // namespace portable
}  // namespace kiln
