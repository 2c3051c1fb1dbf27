// aten::upsample_bilinear2d.vec_out(Tensor input, SymInt[]? output_size, bool align_corners,
//     float[]? scale_factors, *, Tensor(a!) out)
//
// Bilinear resize of each [H, W] plane (F.interpolate(mode="bilinear")). Output pixel
// d reads source coordinate d * scale (align_corners) or (d + 0.5) * scale - 0.5
// clamped at 0 (util/resample.h), interpolating between its two neighbours; the math
// runs in the tensor's dtype, as in PyTorch.
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/resample.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::upsample_bilinear2d.vec_out";

/// Neighbours i0, i1 of output position d and the weight of i1.
template <typename T>
void source(int64_t d, int64_t in, T scale, bool align_corners, int64_t* i0, int64_t* i1, T* frac) {
  T x = align_corners ? scale * static_cast<T>(d) : scale * (static_cast<T>(d) + T(0.5)) - T(0.5);
  if (x < 0) x = 0;
  *i0 = static_cast<int64_t>(x);
  if (*i0 > in - 1) *i0 = in - 1;
  *i1 = *i0 < in - 1 ? *i0 + 1 : *i0;
  *frac = x - static_cast<T>(*i0);
}

template <typename T>
void resize(const ResampleShape& s, bool align_corners, const T* in, T* out) {
  const T scale_h = resample_scale<T>(s.in_h, s.out_h, align_corners, s.scale_h);
  const T scale_w = resample_scale<T>(s.in_w, s.out_w, align_corners, s.scale_w);
  for (int64_t p = 0; p < s.planes; ++p) {
    const T* x = in + p * s.in_h * s.in_w;
    T* y = out + p * s.out_h * s.out_w;
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      int64_t h0 = 0, h1 = 0;
      T fh = 0;
      source(oh, s.in_h, scale_h, align_corners, &h0, &h1, &fh);
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        int64_t w0 = 0, w1 = 0;
        T fw = 0;
        source(ow, s.in_w, scale_w, align_corners, &w0, &w1, &fw);
        const T top = x[h0 * s.in_w + w0] * (1 - fw) + x[h0 * s.in_w + w1] * fw;
        const T bottom = x[h1 * s.in_w + w0] * (1 - fw) + x[h1 * s.in_w + w1] * fw;
        y[oh * s.out_w + ow] = top * (1 - fh) + bottom * fh;
      }
    }
  }
}

}  // namespace

void upsample_bilinear2d_vec_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  bool has_size = false, has_scales = false;
  const Span<const int64_t> output_size = r.optional_int_list(1, &has_size);
  const bool align_corners = r.bool_value(2);
  const Span<const double> scales = r.optional_double_list(3, &has_scales);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  ResampleShape s{};
  if (!make_resample_shape(ctx, kName, *in, has_size, output_size, has_scales, scales, *out, &s)) return;
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    resize<T>(s, align_corners, in->const_data_ptr<T>(), out->mutable_data_ptr<T>());
  });
}

}  // namespace portable
}  // namespace kiln
