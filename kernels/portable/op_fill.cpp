// aten::fill.Scalar_out(Tensor self, Scalar value, *, Tensor(a!) out)
// aten::fill.Tensor_out(Tensor self, Tensor value, *, Tensor(a!) out)
// aten::full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None,
//     Tensor(a!) out)
//
// out takes self's shape (its dtype is out's own) and every element the value. The
// Tensor overload's value is a 0-dim tensor of any dtype, converted to out's.
#include "kernels/portable/util/scalar_fill.h"

namespace kiln {
namespace portable {

namespace {

void fill_like(KernelContext& ctx, const char* name, const Tensor& self, const ScalarArg& value, Tensor& out) {
  if (!resize_output_like(ctx, name, out, self)) return;
  fill_scalar(ctx, name, out, value);
}

}  // namespace

void fill_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::fill.Scalar_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* self = r.tensor_any_layout(0);
  const ScalarArg value = r.scalar_arg(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  fill_like(ctx, kName, *self, value, *out);
}

void fill_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::fill.Tensor_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* self = r.tensor_any_layout(0);
  Tensor* value = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, value->dim() == 0, Error::InvalidArgument, kName,
                    "value must be a 0-dim tensor, got %s", ShapeString(*value).c_str());
  ScalarArg scalar;
  const bool known = visit_dtype<kAllTypes>(value->scalar_type(), [&](auto tag) {
    using V = decltype(tag);
    const V v = value->const_data_ptr<V>()[0];
    scalar.integral = !is_float_type(value->scalar_type());
    scalar.integer = scalar.integral ? static_cast<int64_t>(v) : 0;
    scalar.real = static_cast<double>(v);
  });
  KILN_KERNEL_CHECK(ctx, known, Error::InvalidType, kName, "value has dtype %s, which is not supported",
                    scalar_type_name(value->scalar_type()));
  fill_like(ctx, kName, *self, scalar, *out);
}

void full_like_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::full_like.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* self = r.tensor_any_layout(0);
  const ScalarArg value = r.scalar_arg(1);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  fill_like(ctx, kName, *self, value, *out);
}

}  // namespace portable
}  // namespace kiln
