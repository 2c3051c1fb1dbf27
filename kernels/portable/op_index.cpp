// aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out)
//
// self[indices] with PyTorch's advanced-indexing rules (util/advanced_index.h): Long
// or Int index tensors (negative values count from the end), Bool/Byte masks, None
// for whole dims. An out-of-range index fails the kernel.
#include "kernels/portable/util/advanced_index.h"
#include "kernels/portable/util/copy.h"

namespace kiln {
namespace portable {

void index_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::index.Tensor_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const Span<Tensor* const> indices = r.optional_tensor_list(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  IndexPlan plan;
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out") || !make_index_plan(ctx, kName, *in, indices, &plan) ||
      !resize_output(ctx, kName, *out, {plan.sizes, static_cast<size_t>(plan.rank)})) {
    return;
  }
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(*in, *out), Error::InvalidArgument, kName, "out must not share memory with self");
  const size_t esize = in->element_size();
  const uint8_t* src = in->const_data_ptr<uint8_t>();
  uint8_t* dst = out->mutable_data_ptr<uint8_t>();
  for_each_indexed(ctx, kName, plan, nullptr, [&](size_t o, size_t s, size_t) { std::memcpy(dst + o * esize, src + s * esize, esize); });
}

}  // namespace portable
}  // namespace kiln
