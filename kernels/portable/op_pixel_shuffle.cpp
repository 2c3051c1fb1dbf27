// aten::pixel_shuffle.out(Tensor self, int upscale_factor, *, Tensor(a!) out)
// aten::pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out)
//
// pixel_shuffle moves channel blocks into space: [..., C * r * r, H, W] becomes
// [..., C, H * r, W * r] with out[c, h * r + i, w * r + j] = self[c * r * r + i * r + j, h, w];
// pixel_unshuffle is its inverse. Both are one 6-D strided copy (leading dims merged).
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

void shuffle(KernelContext& ctx, const char* name, Span<EValue*> args, bool up) {
  ArgReader r(ctx, name, args, 4);
  Tensor* in = r.tensor(0);
  const int64_t factor = r.int_value(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() >= 3, Error::InvalidArgument, name, "self %s needs at least 3 dims",
                    ShapeString(*in).c_str());
  KILN_KERNEL_CHECK(ctx, factor > 0 && factor <= 65535, Error::InvalidArgument, name, "factor %lld is invalid",
                    static_cast<long long>(factor));
  if (!check_same_dtype(ctx, name, *in, *out, "self", "out")) return;
  const int32_t rank = in->dim();
  const int64_t c = in->size(-3), h = in->size(-2), w = in->size(-1);
  const int64_t rr = factor * factor;
  KILN_KERNEL_CHECK(ctx, up ? c % rr == 0 : (h % factor == 0 && w % factor == 0), Error::InvalidArgument, name,
                    "self %s is not divisible by factor %lld", ShapeString(*in).c_str(), static_cast<long long>(factor));
  const int64_t oc = up ? c / rr : c * rr;
  const int64_t oh = up ? h * factor : h / factor;
  const int64_t ow = up ? w * factor : w / factor;
  KILN_KERNEL_CHECK(ctx, oc <= INT32_MAX && oh <= INT32_MAX && ow <= INT32_MAX, Error::InvalidArgument, name,
                    "the result is too large");
  SizesType sizes[kTensorMaxDim];
  int64_t batch = 1;
  for (int32_t d = 0; d < rank - 3; ++d) {
    sizes[d] = in->size(d);
    batch *= in->size(d);
  }
  sizes[rank - 3] = static_cast<SizesType>(oc);
  sizes[rank - 2] = static_cast<SizesType>(oh);
  sizes[rank - 1] = static_cast<SizesType>(ow);
  if (!resize_output(ctx, name, *out, {sizes, static_cast<size_t>(rank)}) || out->numel() == 0) return;
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(*in, *out), Error::InvalidArgument, name, "out must not share memory with self");
  // Walk the shuffled side as [batch, C, H, r, W, r] (the channel-blocked side's element
  // (b, c, i, j, h, w) sits at ((b * C + c) * r * r + i * r + j) * H * W + h * W + w).
  const int64_t cs = up ? oc : c;  // channels of the un-blocked side
  const int64_t hs = up ? h : oh, ws = up ? w : ow;
  const int64_t sizes6[6] = {batch, cs, hs, factor, ws, factor};
  const int64_t plane = hs * ws;
  const int64_t blocked[6] = {cs * rr * plane, rr * plane, ws, factor * plane, 1, plane};
  const int64_t spatial[6] = {cs * rr * plane, rr * plane, factor * ws * factor, ws * factor, factor, 1};
  strided_copy(in->const_data_ptr(), up ? blocked : spatial, out->mutable_data_ptr(), up ? spatial : blocked,
               sizes6, 6, in->element_size());
}

}  // namespace

void pixel_shuffle_out(KernelContext& ctx, Span<EValue*> args) {
  shuffle(ctx, "aten::pixel_shuffle.out", args, true);
}

void pixel_unshuffle_out(KernelContext& ctx, Span<EValue*> args) {
  shuffle(ctx, "aten::pixel_unshuffle.out", args, false);
}

}  // namespace portable
}  // namespace kiln
