// cortex_m::transpose.out(Tensor input, int[] perm, *, Tensor(a!) out)
//
// out = input.permute(perm), contiguous; any element size, up to 6 dims.
#include <cstring>

#include "kernels/cortex_m/util/args.h"

namespace kiln {
namespace cortex_m {

void transpose_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::transpose.out";
  constexpr int32_t kMaxDims = 6;
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  Span<const int64_t> perm = r.int_list(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  const int32_t rank = in->dim();
  if (rank > kMaxDims || perm.size() != static_cast<size_t>(rank) || out->scalar_type() != in->scalar_type()) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName,
                     "input %s (%d dims, at most %d) needs a permutation of as many dims (got %zu) and an out of "
                     "its dtype",
                     portable::ShapeString(*in).c_str(), static_cast<int>(rank), static_cast<int>(kMaxDims), perm.size());
    return;
  }
  SizesType sizes[kMaxDims];
  int64_t in_strides[kMaxDims];
  bool seen[kMaxDims] = {};
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    in_strides[d] = stride;
    stride *= in->size(d);
  }
  int64_t strides[kMaxDims];  // input stride of each output dim
  for (int32_t d = 0; d < rank; ++d) {
    const int64_t p = perm[d] < 0 ? perm[d] + rank : perm[d];
    if (p < 0 || p >= rank || seen[p]) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "perm entry %lld is not a permutation of %d dims",
                       static_cast<long long>(perm[d]), static_cast<int>(rank));
      return;
    }
    seen[p] = true;
    sizes[d] = in->size(static_cast<int32_t>(p));
    strides[d] = in_strides[p];
  }
  if (!portable::resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(rank)})) return;
  const size_t element = in->element_size();
  const size_t n = out->numel();
  const uint8_t* src = static_cast<const uint8_t*>(in->const_data_ptr());
  uint8_t* dst = static_cast<uint8_t*>(out->mutable_data_ptr());
  int64_t index[kMaxDims] = {};
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * element, src + offset * static_cast<int64_t>(element), element);
    for (int32_t d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < sizes[d]) break;
      offset -= strides[d] * sizes[d];
      index[d] = 0;
    }
  }
}

}  // namespace cortex_m
}  // namespace kiln
