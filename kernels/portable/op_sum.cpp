// aten::sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *,
//     ScalarType? dtype=None, Tensor(a!) out)
//
// dim None or [] sums everything. The sum is computed in out's dtype (PyTorch gives
// integer inputs an int64 out); floats accumulate in double.
#include <type_traits>

#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/reduce.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

void sum_intlist_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::sum.IntList_out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> dims = r.optional_int_list(1);
  const bool keepdim = r.bool_value(2);
  bool has_dtype = false;
  const int64_t dtype = r.optional_int(3, 0, &has_dtype);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  if (!check_dtype_argument(ctx, kName, has_dtype, dtype, *out)) return;
  KILN_KERNEL_CHECK(ctx, is_computable_type(in->scalar_type()) && can_cast(in->scalar_type(), out->scalar_type()),
                    Error::InvalidType, kName,
                    "cannot sum %s into a %s out", scalar_type_name(in->scalar_type()),
                    scalar_type_name(out->scalar_type()));
  ReducePlan plan;
  if (!plan_reduction(ctx, kName, *in, dims, keepdim, *out, &plan)) return;
  dispatch_dtype<kRealTypes>(ctx, kName, out->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    T* o = out->mutable_data_ptr<T>();
    const ScalarType in_type = in->scalar_type();
    const void* x = in->const_data_ptr();
    for_each_output(plan, [&](size_t oi, size_t base) {
      Acc acc = 0;
      for_each_reduced(plan, base, [&](size_t i) { acc = wrap_add(acc, static_cast<Acc>(load_as<T>(in_type, x, i))); });
      o[oi] = static_cast<T>(acc);
    });
  });
}

}  // namespace portable
}  // namespace kiln
