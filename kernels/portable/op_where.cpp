// aten::where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out)
//
// out = condition ? self : other, all three broadcast together. The condition is bool
// (or uint8, the legacy mask type); values are computed in out's dtype.
#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

void where_self_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::where.self_out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* cond = r.tensor(0);
  Tensor* a = r.tensor(1);
  Tensor* b = r.tensor(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, cond->scalar_type() == ScalarType::Bool || cond->scalar_type() == ScalarType::Byte,
                    Error::InvalidType, kName, "condition must be Bool or Byte, got %s",
                    scalar_type_name(cond->scalar_type()));
  SizesType ab[kTensorMaxDim];
  SizesType sizes[kTensorMaxDim];
  int32_t ab_rank = 0;
  int32_t rank = 0;
  if (!broadcast_shapes(a->sizes(), b->sizes(), ab, &ab_rank) ||
      !broadcast_shapes(cond->sizes(), {ab, static_cast<size_t>(ab_rank)}, sizes, &rank)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "shapes %s, %s and %s do not broadcast",
                     ShapeString(*cond).c_str(), ShapeString(*a).c_str(), ShapeString(*b).c_str());
    return;
  }
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(rank)})) return;
  const ScalarType common = promote_types(a->scalar_type(), b->scalar_type());
  KILN_KERNEL_CHECK(ctx, can_cast(common, out->scalar_type()), Error::InvalidType, kName,
                    "inputs %s and %s cannot be written to a %s out",
                    scalar_type_name(a->scalar_type()), scalar_type_name(b->scalar_type()),
                    scalar_type_name(out->scalar_type()));
  const uint8_t* c = cond->const_data_ptr<uint8_t>();  // bool and uint8 are both one byte
  const Tensor* const inputs[3] = {cond, a, b};
  dispatch_dtype<kAllTypes>(ctx, kName, out->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out->mutable_data_ptr<T>();
    if (a->scalar_type() == out->scalar_type() && b->scalar_type() == out->scalar_type()) {
      const Elements<T> x = elements_of<T>(*a);
      const Elements<T> y = elements_of<T>(*b);
      for_each_broadcast<3>(out->sizes(), inputs, [&](size_t i, const size_t* k) {
        o[i] = c[k[0]] != 0 ? x[k[1]] : y[k[2]];
      });
    } else {
      for_each_broadcast<3>(out->sizes(), inputs, [&](size_t i, const size_t* k) {
        o[i] = c[k[0]] != 0 ? load_as<T>(a->scalar_type(), a->const_data_ptr(), k[1])
                            : load_as<T>(b->scalar_type(), b->const_data_ptr(), k[2]);
      });
    }
  });
}

}  // namespace portable
}  // namespace kiln
