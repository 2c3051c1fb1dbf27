// cortex_m::pad.out(Tensor input, int[] pre_pad, int[] post_pad, int pad_value,
//     *, Tensor(a!) out)
//
// Constant padding of an int8 tensor of up to 4 dims. pre_pad and post_pad have 4
// entries in memory order (NHWC for a channels-last tensor); a tensor of rank r < 4 uses
// the last r entries. out has the input's dim order. Like ExecuTorch's reference, a 4-D
// tensor with one channel or one pixel counts as channels-last whatever its dim order
// says (its bytes are the same either way).
#include <cstring>

#include "kernels/cortex_m/util/args.h"

namespace kiln {
namespace cortex_m {

void pad_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::pad.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor_any_layout(0);
  Span<const int64_t> pre = r.int_list(1);
  Span<const int64_t> post = r.int_list(2);
  const int64_t value = r.int_value(3);
  Tensor* out = r.tensor_any_layout(4);
  if (!r.ok()) return;
  const int32_t rank = in->dim();
  if (!check_int8(ctx, kName, *in, "input") || !check_int8(ctx, kName, *out, "out") ||
      !check_range(ctx, kName, value, -128, 127, "pad_value")) {
    return;
  }
  if (rank < 1 || rank > 4 || pre.size() != 4 || post.size() != 4) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "needs a tensor of 1 to 4 dims (has %d) and 4 pads each (%zu, %zu)",
                     static_cast<int>(rank), pre.size(), post.size());
    return;
  }
  // Physical (memory-order) sizes, padded to 4 dims with leading ones.
  static constexpr DimOrderType kChannelsLast[4] = {0, 2, 3, 1};
  const DimOrderType* order = rank == 4 && stored_in_order(*in, kChannelsLast) ? kChannelsLast : in->dim_order().data();
  int64_t in_dims[4] = {1, 1, 1, 1}, out_dims[4], before[4];
  SizesType sizes[4];
  for (int32_t i = 0; i < rank; ++i) in_dims[4 - rank + i] = in->size(order[i]);
  for (int32_t i = 0; i < 4; ++i) {
    if (pre[i] < 0 || post[i] < 0 || pre[i] > 65536 || post[i] > 65536 || (i < 4 - rank && (pre[i] | post[i]) != 0)) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "pad %d (%lld, %lld) is negative, too large, or pads a dim a %d-D tensor lacks",
                       static_cast<int>(i), static_cast<long long>(pre[i]), static_cast<long long>(post[i]),
                       static_cast<int>(rank));
      return;
    }
    out_dims[i] = in_dims[i] + pre[i] + post[i];
    before[i] = pre[i];
  }
  for (int32_t i = 0; i < rank; ++i) sizes[order[i]] = static_cast<SizesType>(out_dims[4 - rank + i]);
  if (!portable::resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(rank)})) return;
  if (!stored_in_order(*out, order)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "out must be stored in the input's dim order");
    return;
  }
  const int8_t* x = in->const_data_ptr<int8_t>();
  int8_t* y = out->mutable_data_ptr<int8_t>();
  std::memset(y, static_cast<int>(static_cast<int8_t>(value)), out->numel());
  for (int64_t a = 0; a < in_dims[0]; ++a) {
    for (int64_t b = 0; b < in_dims[1]; ++b) {
      for (int64_t c = 0; c < in_dims[2]; ++c) {
        const int64_t src = ((a * in_dims[1] + b) * in_dims[2] + c) * in_dims[3];
        const int64_t dst = (((a + before[0]) * out_dims[1] + b + before[1]) * out_dims[2] + c + before[2]) * out_dims[3] + before[3];
        std::memcpy(y + dst, x + src, static_cast<size_t>(in_dims[3]));
      }
    }
  }
}

}  // namespace cortex_m
}  // namespace kiln
