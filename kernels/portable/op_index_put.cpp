// aten::index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False,
//     *, Tensor(a!) out)
// aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False)
//     -> Tensor(a!)
//
// self[indices] = values (or += with accumulate), indexing as in index.Tensor_out
// (util/advanced_index.h); values (self's dtype) broadcast to the indexed shape. The
// out variant writes a copy of self; index_put_ updates self (ExecuTorch programs'
// in-place cache updates). With repeated indices and no accumulate, the last write wins.
#include "kernels/portable/util/advanced_index.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

namespace {

/// Writes values into dst (self's shape and dtype, already holding self) through `indices`.
void put(KernelContext& ctx, const char* name, Tensor& dst, Span<Tensor* const> indices, const Tensor& values,
         bool accumulate) {
  IndexPlan plan;
  if (!check_same_dtype(ctx, name, dst, values, "self", "values") || !make_index_plan(ctx, name, dst, indices, &plan)) {
    return;
  }
  KILN_KERNEL_CHECK(ctx, broadcasts_to(values.sizes(), {plan.sizes, static_cast<size_t>(plan.rank)}),
                    Error::InvalidArgument, name, "values %s do not broadcast to the indexed shape %s",
                    ShapeString(values).c_str(), ShapeString({plan.sizes, static_cast<size_t>(plan.rank)}).c_str());
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(values, dst), Error::InvalidArgument, name,
                    "values must not share memory with the result");
  int64_t value_strides[kTensorMaxDim];
  const int32_t shift = plan.rank - values.dim();
  for (int32_t d = 0; d < plan.rank; ++d) {
    value_strides[d] = d < shift || values.size(d - shift) == 1 ? 0 : values.strides()[d - shift];
  }
  if (!accumulate) {
    const size_t esize = dst.element_size();
    const uint8_t* v = values.const_data_ptr<uint8_t>();
    uint8_t* o = dst.mutable_data_ptr<uint8_t>();
    for_each_indexed(ctx, name, plan, value_strides,
                     [&](size_t, size_t s, size_t x) { std::memcpy(o + s * esize, v + x * esize, esize); });
    return;
  }
  dispatch_dtype<kRealTypes>(ctx, name, dst.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* v = values.const_data_ptr<T>();
    T* o = dst.mutable_data_ptr<T>();
    for_each_indexed(ctx, name, plan, value_strides, [&](size_t, size_t s, size_t x) { o[s] = wrap_add(o[s], v[x]); });
  });
}

}  // namespace

void index_put_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::index_put.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const Span<Tensor* const> indices = r.optional_tensor_list(1);
  Tensor* values = r.tensor(2);
  const bool accumulate = r.bool_value(3);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out") || !resize_output_like(ctx, kName, *out, *in)) return;
  copy_all(*in, *out);
  put(ctx, kName, *out, indices, *values, accumulate);
}

void index_put_inplace(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::index_put_";
  ArgReader r(ctx, kName, args, 5);
  Tensor* self = r.tensor(0);
  const Span<Tensor* const> indices = r.optional_tensor_list(1);
  Tensor* values = r.tensor(2);
  const bool accumulate = r.bool_value(3);
  Tensor* ret = r.tensor(4);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, ret->const_data_ptr() == self->const_data_ptr() && same_shape(*ret, *self),
                    Error::InvalidArgument, kName, "the returned tensor must be self");
  put(ctx, kName, *self, indices, *values, accumulate);
}

}  // namespace portable
}  // namespace kiln
