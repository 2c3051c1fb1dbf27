// aten::clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out)
// aten::clamp.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out)
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/extremum.h"

namespace kiln {
namespace portable {

void clamp_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::clamp.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = nullptr;
  Tensor* out = nullptr;
  const bool has_lo = !r.is_none(1);
  const bool has_hi = !r.is_none(2);
  const ScalarArg lo = has_lo ? r.scalar_arg(1) : ScalarArg{};
  const ScalarArg hi = has_hi ? r.scalar_arg(2) : ScalarArg{};
  if (!unary_tensors(r, 0, 3, &in, &out)) return;
  KILN_KERNEL_CHECK(ctx, has_lo || has_hi, Error::InvalidArgument, kName,
                    "at least one of min and max must be given");
  unary_op<kRealTypes>(ctx, kName, *in, *out, [=](auto x) {
    using T = decltype(x);
    // PyTorch applies min first, then max (so max wins when min > max); NaN passes.
    if (has_lo && x < lo.as<T>()) x = lo.as<T>();
    if (has_hi && x > hi.as<T>()) x = hi.as<T>();
    return x;
  });
}

// The bounds are tensors broadcast with self; the result is NaN where self or a given
// bound is NaN (PyTorch's rule for tensor bounds), min applies first.
void clamp_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::clamp.Tensor_out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  Tensor* lo = r.optional_tensor(1);
  Tensor* hi = r.optional_tensor(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, lo != nullptr || hi != nullptr, Error::InvalidArgument, kName,
                    "at least one of min and max must be given");
  // An absent bound is replaced by self, whose index is then ignored.
  const Tensor* const inputs[3] = {in, lo != nullptr ? lo : in, hi != nullptr ? hi : in};
  SizesType partial[kTensorMaxDim];
  SizesType sizes[kTensorMaxDim];
  int32_t partial_rank = 0;
  int32_t rank = 0;
  if (!broadcast_shapes(inputs[0]->sizes(), inputs[1]->sizes(), partial, &partial_rank) ||
      !broadcast_shapes({partial, static_cast<size_t>(partial_rank)}, inputs[2]->sizes(), sizes, &rank)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "shapes %s, %s and %s do not broadcast",
                     ShapeString(*inputs[0]).c_str(), ShapeString(*inputs[1]).c_str(),
                     ShapeString(*inputs[2]).c_str());
    return;
  }
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(rank)})) return;
  const ScalarType common = promote_types(promote_types(in->scalar_type(), inputs[1]->scalar_type()),
                                          inputs[2]->scalar_type());
  KILN_KERNEL_CHECK(ctx, can_cast(common, out->scalar_type()), Error::InvalidType, kName,
                    "a %s result cannot be written to a %s out", scalar_type_name(common),
                    scalar_type_name(out->scalar_type()));
  dispatch_dtype<kRealTypes>(ctx, kName, out->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out->mutable_data_ptr<T>();
    for_each_broadcast<3>(out->sizes(), inputs, [&](size_t i, const size_t* k) {
      T x = load_as<T>(in->scalar_type(), in->const_data_ptr(), k[0]);
      if (lo != nullptr) x = extreme</*kMax=*/true>(x, load_as<T>(lo->scalar_type(), lo->const_data_ptr(), k[1]));
      if (hi != nullptr) x = extreme</*kMax=*/false>(x, load_as<T>(hi->scalar_type(), hi->const_data_ptr(), k[2]));
      o[i] = x;
    });
  });
}

}  // namespace portable
}  // namespace kiln
