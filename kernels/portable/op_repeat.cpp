// aten::repeat.out(Tensor self, SymInt[] repeats, *, Tensor(a!) out)
//
// Tiles self repeats[d] times along each dimension; self's shape is first padded with
// leading 1s to len(repeats) dims. Each tile is one strided copy of self.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void repeat_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::repeat.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> repeats = r.int_list(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  const int32_t rank = static_cast<int32_t>(repeats.size());
  KILN_KERNEL_CHECK(ctx, rank >= in->dim() && rank <= kTensorMaxDim, Error::InvalidArgument, kName,
                    "%d repeats for self %s (need at least its rank, at most %d)", static_cast<int>(rank),
                    ShapeString(*in).c_str(), static_cast<int>(kTensorMaxDim));
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  const int32_t shift = rank - in->dim();
  int64_t tile[kTensorMaxDim];  // self's padded shape
  int64_t counts[kTensorMaxDim];
  SizesType sizes[kTensorMaxDim];
  for (int32_t d = 0; d < rank; ++d) {
    tile[d] = d < shift ? 1 : in->size(d - shift);
    counts[d] = repeats[d];
    KILN_KERNEL_CHECK(ctx, repeats[d] >= 0 && repeats[d] <= INT32_MAX && tile[d] * repeats[d] <= INT32_MAX, Error::InvalidArgument, kName,
                      "repeat %lld of dim %d is invalid for self %s", static_cast<long long>(repeats[d]),
                      static_cast<int>(d), ShapeString(*in).c_str());
    sizes[d] = static_cast<SizesType>(tile[d] * repeats[d]);
  }
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(rank)}) || out->numel() == 0) return;
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(*in, *out), Error::InvalidArgument, kName,
                    "out must not share memory with self");
  int64_t src_strides[kTensorMaxDim];
  int64_t dst_strides[kTensorMaxDim];
  int64_t tile_strides[kTensorMaxDim];  // from one tile to the next, per dimension
  contiguous_strides(tile, rank, src_strides);
  for (int32_t d = 0; d < rank; ++d) {
    dst_strides[d] = out->strides()[d];
    tile_strides[d] = tile[d] * dst_strides[d];
  }
  const size_t esize = in->element_size();
  uint8_t* dst = out->mutable_data_ptr<uint8_t>();
  walk(counts, tile_strides, rank, [&](size_t base) {
    strided_copy(in->const_data_ptr(), src_strides, dst + base * esize, dst_strides, tile, rank, esize);
  });
}

}  // namespace portable
}  // namespace kiln
