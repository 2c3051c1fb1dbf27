// aten::arange.out(Scalar end, *, Tensor(a!) out)
// aten::arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out)
//
// out = [start, start + step, ...) up to end (exclusive), ceil((end - start) / step)
// elements, in out's dtype. Values are start + i * step, computed in int64 when every
// argument is an integer (exact, wrapping into narrow dtypes) and in double otherwise.
#include <cmath>

#include "kernels/portable/util/scalar_fill.h"

namespace kiln {
namespace portable {

namespace {

void arange(KernelContext& ctx, const char* name, const ScalarArg& start, const ScalarArg& end,
            const ScalarArg& step, Tensor& out) {
  KILN_KERNEL_CHECK(ctx, step.real != 0, Error::InvalidArgument, name, "step must not be 0");
  KILN_KERNEL_CHECK(ctx, std::isfinite(start.real) && std::isfinite(end.real) && std::isfinite(step.real),
                    Error::InvalidArgument, name, "start %g, end %g and step %g must be finite", start.real,
                    end.real, step.real);
  const double count = std::ceil((end.real - start.real) / step.real);
  KILN_KERNEL_CHECK(ctx, count >= 0 && count <= INT32_MAX, Error::InvalidArgument, name,
                    "start %g, end %g and step %g give %g elements", start.real, end.real, step.real, count);
  const SizesType size = static_cast<SizesType>(count);
  if (!resize_output(ctx, name, out, {&size, 1})) return;
  const bool integral = start.integral && end.integral && step.integral;
  dispatch_dtype<kRealTypes>(ctx, name, out.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.mutable_data_ptr<T>();
    for (SizesType i = 0; i < size; ++i) {
      if (integral) {
        const uint64_t v = static_cast<uint64_t>(start.integer) + static_cast<uint64_t>(i) * static_cast<uint64_t>(step.integer);
        ScalarArg value;
        value.integral = true;
        value.integer = static_cast<int64_t>(v);
        o[i] = scalar_as<T>(value);
      } else {
        o[i] = convert_double<T>(start.real + static_cast<double>(i) * step.real);
      }
    }
  });
}

}  // namespace

void arange_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::arange.out";
  ArgReader r(ctx, kName, args, 3);
  const ScalarArg end = r.scalar_arg(0);
  Tensor* out = r.tensor(1);
  if (!r.ok()) return;
  ScalarArg start;
  start.integral = true;
  ScalarArg step;
  step.integral = true;
  step.integer = 1;
  step.real = 1.0;
  arange(ctx, kName, start, end, step, *out);
}

void arange_start_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::arange.start_out";
  ArgReader r(ctx, kName, args, 5);
  const ScalarArg start = r.scalar_arg(0);
  const ScalarArg end = r.scalar_arg(1);
  const ScalarArg step = r.scalar_arg(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  arange(ctx, kName, start, end, step, *out);
}

}  // namespace portable
}  // namespace kiln
