// aten::_upsample_bilinear2d_aa.out(Tensor self, SymInt[2] output_size, bool align_corners,
//     float? scales_h=None, float? scales_w=None, *, Tensor(a!) out)
//
// Antialiased bilinear resize (F.interpolate(mode="bilinear", antialias=True)): output
// pixel d averages the input pixels within `support` of its centre c = (d + 0.5) *
// scale with triangle weights 1 - |(i + 0.5 - c) / max(scale, 1)|, normalised to sum
// 1; support = max(scale, 1). Upsampling (scale < 1) equals plain bilinear inside the
// image. Weights are recomputed per pixel (no scratch memory), sums run in double.
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/resample.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::_upsample_bilinear2d_aa.out";

/// The input window [first, last) of output position d and its weights' parameters.
struct Window {
  int64_t first, last;
  double center, invscale, total;

  Window(int64_t d, int64_t in, double scale) {
    const double support = scale >= 1 ? scale : 1.0;
    center = scale * (static_cast<double>(d) + 0.5);
    invscale = scale >= 1 ? 1.0 / scale : 1.0;
    const double lo = center - support + 0.5, hi = center + support + 0.5;
    first = lo > 0 ? static_cast<int64_t>(lo) : 0;
    last = hi < static_cast<double>(in) ? static_cast<int64_t>(hi) : in;
    total = 0;
    for (int64_t i = first; i < last; ++i) total += raw(i);
  }
  double raw(int64_t i) const {
    const double x = std::fabs((static_cast<double>(i) - center + 0.5) * invscale);
    return x < 1 ? 1 - x : 0;
  }
  double weight(int64_t i) const { return total != 0 ? raw(i) / total : 0; }
};

template <typename T>
void resize(const ResampleShape& s, bool align_corners, const T* in, T* out) {
  const double scale_h = resample_scale<double>(s.in_h, s.out_h, align_corners, s.scale_h);
  const double scale_w = resample_scale<double>(s.in_w, s.out_w, align_corners, s.scale_w);
  for (int64_t p = 0; p < s.planes; ++p) {
    const T* x = in + p * s.in_h * s.in_w;
    T* y = out + p * s.out_h * s.out_w;
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      const Window wh(oh, s.in_h, scale_h);
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        const Window ww(ow, s.in_w, scale_w);
        double sum = 0;
        for (int64_t i = wh.first; i < wh.last; ++i) {
          double row = 0;
          for (int64_t j = ww.first; j < ww.last; ++j) row += ww.weight(j) * static_cast<double>(x[i * s.in_w + j]);
          sum += wh.weight(i) * row;
        }
        y[oh * s.out_w + ow] = static_cast<T>(sum);
      }
    }
  }
}

}  // namespace

void upsample_bilinear2d_aa_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 7);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> output_size = r.int_list(1);
  const bool align_corners = r.bool_value(2);
  // Absent (or non-positive) scales fall back to in / out (util/resample.h).
  const double scale_h = r.is_none(3) ? 0 : r.double_value(3);
  const double scale_w = r.is_none(4) ? 0 : r.double_value(4);
  Tensor* out = r.tensor(5);
  if (!r.ok()) return;
  ResampleShape s{};
  if (!make_resample_shape(ctx, kName, *in, true, output_size, false, {}, *out, &s)) return;
  s.scale_h = scale_h;
  s.scale_w = scale_w;
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    resize<T>(s, align_corners, in->const_data_ptr<T>(), out->mutable_data_ptr<T>());
  });
}

}  // namespace portable
}  // namespace kiln
