// aten::as_strided_copy.out(Tensor self, SymInt[] size, SymInt[] stride,
//     SymInt? storage_offset=None, *, Tensor(a!) out)
//
// The view of self's elements (its storage, in memory order) with the given sizes,
// strides and offset. Every element the view reaches must lie inside self; negative
// strides are refused, as in PyTorch.
#include "kernels/portable/util/strided_view.h"

namespace kiln {
namespace portable {

void as_strided_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::as_strided_copy.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> size = r.int_list(1);
  const Span<const int64_t> stride = r.int_list(2);
  const int64_t offset = r.optional_int(3, 0);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, size.size() == stride.size() && size.size() <= static_cast<size_t>(kTensorMaxDim),
                    Error::InvalidArgument, kName, "size has %zu entries, stride %zu (at most %d)", size.size(),
                    stride.size(), static_cast<int>(kTensorMaxDim));
  KILN_KERNEL_CHECK(ctx, offset >= 0, Error::InvalidArgument, kName, "storage_offset %lld is negative",
                    static_cast<long long>(offset));
  const int32_t rank = static_cast<int32_t>(size.size());
  int64_t sizes[kTensorMaxDim];
  int64_t strides[kTensorMaxDim];
  bool empty = false;
  uint64_t last = static_cast<uint64_t>(offset);  // the view's farthest element
  for (int32_t d = 0; d < rank; ++d) {
    KILN_KERNEL_CHECK(ctx, size[d] >= 0 && size[d] <= INT32_MAX && stride[d] >= 0 && stride[d] <= INT32_MAX,
                      Error::InvalidArgument, kName, "size %lld / stride %lld of dim %d is invalid",
                      static_cast<long long>(size[d]), static_cast<long long>(stride[d]), static_cast<int>(d));
    sizes[d] = size[d];
    strides[d] = stride[d];
    empty = empty || size[d] == 0;
    // Each term is below 2^62 and `last` stays below numel: the sum cannot wrap.
    if (size[d] > 0 && last < in->numel()) last += static_cast<uint64_t>(size[d] - 1) * static_cast<uint64_t>(stride[d]);
  }
  KILN_KERNEL_CHECK(ctx, empty || last < in->numel(), Error::InvalidArgument, kName,
                    "the view reaches element %llu of self %s, which has %zu", static_cast<unsigned long long>(last),
                    ShapeString(*in).c_str(), in->numel());
  copy_strided_view(ctx, kName, *in, *out, sizes, strides, rank, empty ? 0 : offset);
}

}  // namespace portable
}  // namespace kiln
