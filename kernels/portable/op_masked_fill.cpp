// aten::masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out)
//
// out = mask ? value : self, self and the bool mask broadcast together. As in PyTorch,
// the value must fit self's dtype (300 does not fit int8, 2.5 does not fit uint8 nor
// 1e39 float32; an integer in [-255, 255] fits uint8, wrapping); a float value
// is truncated toward zero into an integer dtype.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

namespace {

template <typename T>
bool value_fits(const ScalarArg& v) {
  using Limits = std::numeric_limits<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    return v.integral || !std::isfinite(v.real) || std::fabs(v.real) <= static_cast<double>(Limits::max());
  } else if (!v.integral) {
    return v.real >= static_cast<double>(Limits::lowest()) && v.real <= static_cast<double>(Limits::max());
  } else if constexpr (std::is_unsigned_v<T>) {
    return v.integer <= static_cast<int64_t>(Limits::max()) && v.integer >= -static_cast<int64_t>(Limits::max());
  } else {
    return v.integer >= static_cast<int64_t>(Limits::lowest()) && v.integer <= static_cast<int64_t>(Limits::max());
  }
}

}  // namespace

void masked_fill_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::masked_fill.Scalar_out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  Tensor* mask = r.tensor(1);
  const ScalarArg value = r.scalar_arg(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  if (!check_dtype(ctx, kName, *mask, ScalarType::Bool, "mask") ||
      !check_same_dtype(ctx, kName, *in, *out, "self", "out") || !resize_to_broadcast(ctx, kName, *in, *mask, *out)) {
    return;
  }
  const uint8_t* m = mask->const_data_ptr<uint8_t>();  // bytes: any non-zero byte is true
  const Tensor* const inputs[2] = {in, mask};
  dispatch_dtype<kAllTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    if (!value_fits<T>(value)) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "value %g does not fit dtype %s",
                       value.integral ? static_cast<double>(value.integer) : value.real,
                       scalar_type_name(in->scalar_type()));
      return;
    }
    const T fill = value.as<T>();
    const Elements<T> x = elements_of<T>(*in);
    T* o = out->mutable_data_ptr<T>();
    for_each_broadcast<2>(out->sizes(), inputs, [&](size_t i, const size_t* k) { o[i] = m[k[1]] != 0 ? fill : x[k[0]]; });
  });
}

}  // namespace portable
}  // namespace kiln
