// aten::mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None,
//     Tensor(a!) out)
// aten::mean.dtype_out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out)
//
// dim None or [] averages everything (global average pooling reaches programs as
// mean over [-1, -2]); dtype_out averages everything into a 0-dim out. Floating point
// outs only (integer inputs need a float dtype, as in PyTorch); sums accumulate in double.
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/reduce.h"

namespace kiln {
namespace portable {

namespace {

void mean_into(KernelContext& ctx, const char* name, const Tensor& in, Span<const int64_t> dims, bool keepdim,
               bool has_dtype, int64_t dtype, Tensor& out) {
  if (!check_dtype_argument(ctx, name, has_dtype, dtype, out)) return;
  KILN_KERNEL_CHECK(ctx, is_computable_type(in.scalar_type()), Error::InvalidType, name,
                    "dtype %s is not supported", scalar_type_name(in.scalar_type()));
  ReducePlan plan;
  if (!plan_reduction(ctx, name, in, dims, keepdim, out, &plan)) return;
  const double count = static_cast<double>(plan.reduce_count);
  dispatch_dtype<kFloatTypes>(ctx, name, out.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.mutable_data_ptr<T>();
    if (in.scalar_type() == out.scalar_type()) {
      const T* x = in.const_data_ptr<T>();
      for_each_output(plan, [&](size_t oi, size_t base) {
        double acc = 0;
        for_each_reduced(plan, base, [&](size_t i) { acc += static_cast<double>(x[i]); });
        o[oi] = static_cast<T>(acc / count);  // 0 / 0 = NaN for an empty reduction, as in PyTorch
      });
    } else {
      const ScalarType in_type = in.scalar_type();
      for_each_output(plan, [&](size_t oi, size_t base) {
        double acc = 0;
        for_each_reduced(plan, base, [&](size_t i) { acc += load_as<double>(in_type, in.const_data_ptr(), i); });
        o[oi] = static_cast<T>(acc / count);
      });
    }
  });
}

}  // namespace

void mean_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::mean.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> dims = r.optional_int_list(1);
  const bool keepdim = r.bool_value(2);
  bool has_dtype = false;
  const int64_t dtype = r.optional_int(3, 0, &has_dtype);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  mean_into(ctx, kName, *in, dims, keepdim, has_dtype, dtype, *out);
}

void mean_dtype_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::mean.dtype_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  bool has_dtype = false;
  const int64_t dtype = r.optional_int(1, 0, &has_dtype);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  mean_into(ctx, kName, *in, {}, /*keepdim=*/false, has_dtype, dtype, *out);
}

}  // namespace portable
}  // namespace kiln
