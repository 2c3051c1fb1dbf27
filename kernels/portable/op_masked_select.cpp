// aten::masked_select.out(Tensor self, Tensor mask, *, Tensor(a!) out)
// aten::masked_scatter.out(Tensor self, Tensor mask, Tensor source, *, Tensor(a!) out)
//
// self and the Bool mask broadcast together. masked_select: out is 1-D, the elements
// where mask is true, in order (its length depends on the data). masked_scatter: out
// has the broadcast shape, taking the next element of source (which must hold enough)
// where mask is true and self elsewhere.
#include <cstring>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

/// Checks dtypes and broadcasting; the broadcast shape goes into sizes/rank.
bool check_masked(KernelContext& ctx, const char* name, const Tensor& in, const Tensor& mask, const Tensor& out,
                  SizesType* sizes, int32_t* rank) {
  if (!check_dtype(ctx, name, mask, ScalarType::Bool, "mask") || !check_same_dtype(ctx, name, in, out, "self", "out")) {
    return false;
  }
  if (!broadcast_shapes(in.sizes(), mask.sizes(), sizes, rank)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, name, "self %s and mask %s do not broadcast",
                     ShapeString(in).c_str(), ShapeString(mask).c_str());
    return false;
  }
  if (memory_overlaps(in, out) || memory_overlaps(mask, out)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, name, "out must not share memory with an input");
    return false;
  }
  return true;
}

}  // namespace

void masked_select_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::masked_select.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  Tensor* mask = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  SizesType sizes[kTensorMaxDim];
  int32_t rank = 0;
  if (!check_masked(ctx, kName, *in, *mask, *out, sizes, &rank)) return;
  const Tensor* inputs[2] = {in, mask};
  const Span<const SizesType> shape{sizes, static_cast<size_t>(rank)};
  const bool* m = mask->const_data_ptr<bool>();
  size_t count = 0;
  for_each_broadcast(shape, inputs, [&](size_t, const size_t* at) { count += m[at[1]] ? 1 : 0; });
  KILN_KERNEL_CHECK(ctx, count <= INT32_MAX, Error::InvalidArgument, kName, "too many selected elements");
  const SizesType length = static_cast<SizesType>(count);
  if (!resize_output(ctx, kName, *out, {&length, 1})) return;
  const size_t esize = in->element_size();
  const uint8_t* src = in->const_data_ptr<uint8_t>();
  uint8_t* dst = out->mutable_data_ptr<uint8_t>();
  size_t k = 0;
  for_each_broadcast(shape, inputs, [&](size_t, const size_t* at) {
    if (m[at[1]] && k < count) std::memcpy(dst + (k++) * esize, src + at[0] * esize, esize);
  });
}

void masked_scatter_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::masked_scatter.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  Tensor* mask = r.tensor(1);
  Tensor* source = r.tensor(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  SizesType sizes[kTensorMaxDim];
  int32_t rank = 0;
  if (!check_masked(ctx, kName, *in, *mask, *out, sizes, &rank) ||
      !check_same_dtype(ctx, kName, *in, *source, "self", "source")) {
    return;
  }
  const Tensor* inputs[2] = {in, mask};
  const Span<const SizesType> shape{sizes, static_cast<size_t>(rank)};
  const bool* m = mask->const_data_ptr<bool>();
  size_t count = 0;
  for_each_broadcast(shape, inputs, [&](size_t, const size_t* at) { count += m[at[1]] ? 1 : 0; });
  KILN_KERNEL_CHECK(ctx, count <= source->numel(), Error::InvalidArgument, kName,
                    "mask selects %zu elements, source %s has only %zu", count, ShapeString(*source).c_str(),
                    source->numel());
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(*source, *out), Error::InvalidArgument, kName,
                    "out must not share memory with source");
  if (!resize_output(ctx, kName, *out, shape)) return;
  const size_t esize = in->element_size();
  const uint8_t* self = in->const_data_ptr<uint8_t>();
  const uint8_t* next = source->const_data_ptr<uint8_t>();
  uint8_t* dst = out->mutable_data_ptr<uint8_t>();
  for_each_broadcast(shape, inputs, [&](size_t o, const size_t* at) {
    const uint8_t* from = m[at[1]] ? next : self + at[0] * esize;
    if (m[at[1]]) next += esize;
    std::memcpy(dst + o * esize, from, esize);
  });
}

}  // namespace portable
}  // namespace kiln
