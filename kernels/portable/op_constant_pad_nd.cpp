// aten::constant_pad_nd.out(Tensor self, SymInt[] pad, Scalar value=0, *, Tensor(a!) out)
//
// pad = [last_before, last_after, second_last_before, ...]: pairs from the last
// dimension backwards. Negative pads crop, as in PyTorch. out is filled with `value`
// and the overlapping region of self is copied in.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

void constant_pad_nd_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::constant_pad_nd.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> pad = r.int_list(1);
  const double value = r.scalar(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  const int32_t rank = in->dim();
  KILN_KERNEL_CHECK(ctx, pad.size() % 2 == 0 && pad.size() <= 2 * static_cast<size_t>(rank),
                    Error::InvalidArgument, kName, "pad has %zu entries for a rank-%d tensor",
                    pad.size(), static_cast<int>(rank));
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  SizesType sizes[kTensorMaxDim];
  int64_t region[kTensorMaxDim];    // sizes of the copied region
  int64_t src_start[kTensorMaxDim];  // where it starts in self
  int64_t dst_start[kTensorMaxDim];  // and in out
  for (int32_t d = 0; d < rank; ++d) {
    const size_t k = static_cast<size_t>(rank - 1 - d) * 2;  // pad index of this dim
    const int64_t before = k < pad.size() ? pad[k] : 0;
    const int64_t after = k < pad.size() ? pad[k + 1] : 0;
    const int64_t size = in->size(d) + before + after;
    KILN_KERNEL_CHECK(ctx, size >= 0 && size <= INT32_MAX, Error::InvalidArgument, kName,
                      "padding dim %d of %s gives size %lld", static_cast<int>(d),
                      ShapeString(*in).c_str(), static_cast<long long>(size));
    sizes[d] = static_cast<SizesType>(size);
    src_start[d] = before < 0 ? -before : 0;
    dst_start[d] = before > 0 ? before : 0;
    const int64_t src_end = in->size(d) - (after < 0 ? -after : 0);
    region[d] = src_end - src_start[d];
    if (region[d] < 0) region[d] = 0;
  }
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(rank)})) return;
  KILN_KERNEL_CHECK(ctx, out->numel() == 0 || out->const_data_ptr() != in->const_data_ptr(),
                    Error::InvalidArgument, kName, "out must not share memory with self");
  const bool filled = dispatch_dtype<kAllTypes>(ctx, kName, out->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out->mutable_data_ptr<T>();
    const T v = static_cast<T>(value);
    for (size_t i = 0; i < out->numel(); ++i) o[i] = v;
  });
  if (!filled || in->numel() == 0) return;
  int64_t src_strides[kTensorMaxDim];
  int64_t dst_strides[kTensorMaxDim];
  size_t src_offset = 0;
  size_t dst_offset = 0;
  for (int32_t d = 0; d < rank; ++d) {
    src_strides[d] = in->strides()[d];
    dst_strides[d] = out->strides()[d];
    src_offset += static_cast<size_t>(src_start[d] * src_strides[d]);
    dst_offset += static_cast<size_t>(dst_start[d] * dst_strides[d]);
  }
  const size_t esize = in->element_size();
  strided_copy(in->const_data_ptr<uint8_t>() + src_offset * esize, src_strides,
               out->mutable_data_ptr<uint8_t>() + dst_offset * esize, dst_strides, region, rank, esize);
}

}  // namespace portable
}  // namespace kiln
