// aten::grid_sampler_2d.out(Tensor input, Tensor grid, int interpolation_mode,
//     int padding_mode, bool align_corners, *, Tensor(a!) out)
//
// F.grid_sample on 4-D input [N, C, H, W] with grid [N, Ho, Wo, 2] of (x, y) in
// [-1, 1]: out [N, C, Ho, Wo]. Modes as in PyTorch: interpolation 0 bilinear,
// 1 nearest (ties to even), 2 bicubic (A = -0.75); padding 0 zeros (taps outside read
// 0), 1 border (coordinates clamped), 2 reflection (mirrored at the borders, then
// clamped). align_corners maps -1 and 1 to the corner pixels' centres instead of
// their outer edges.
#include <cmath>

#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::grid_sampler_2d.out";
enum { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum { kZeros = 0, kBorder = 1, kReflection = 2 };

template <typename T>
struct Sampler {
  const T* plane;
  int64_t h, w;
  int64_t padding;
  bool align_corners;

  T unnormalize(T coord, int64_t size) const {
    return align_corners ? (coord + 1) / 2 * static_cast<T>(size - 1) : ((coord + 1) * static_cast<T>(size) - 1) / 2;
  }

  /// Mirrors `x` into [low2 / 2, high2 / 2] (bounds given doubled, so they stay integers).
  static T reflect(T x, int64_t low2, int64_t high2) {
    if (low2 == high2) return 0;
    const T low = static_cast<T>(low2) / 2;
    const T span = static_cast<T>(high2 - low2) / 2;
    x = std::fabs(x - low);
    const T extra = std::fmod(x, span);
    const int64_t flips = static_cast<int64_t>(std::floor(x / span));
    return flips % 2 == 0 ? extra + low : span - extra + low;
  }

  T clip(T x, int64_t size) const {
    const T hi = static_cast<T>(size - 1);
    return x < 0 ? T(0) : (x > hi ? hi : x);  // NaN stays NaN: its taps read nothing
  }

  /// A coordinate after the padding mode (zeros leaves it as is).
  T pad(T x, int64_t size) const {
    if (padding == kBorder) return clip(x, size);
    if (padding == kReflection) {
      x = align_corners ? reflect(x, 0, 2 * (size - 1)) : reflect(x, -1, 2 * size - 1);
      return clip(x, size);
    }
    return x;
  }

  /// The pixel (y, x), or 0 outside the plane.
  T at(int64_t y, int64_t x) const { return y >= 0 && y < h && x >= 0 && x < w ? plane[y * w + x] : T(0); }

  /// True when a coordinate can be converted to an integer (NaN and far-away
  /// coordinates have no pixel, and converting them would be undefined).
  static bool usable(T v) { return v == v && std::fabs(v) < static_cast<T>(1e9); }

  /// A tap of the bicubic kernel: its coordinates go through the padding mode.
  T tap(T y, T x) const {
    const T py = pad(y, h), px = pad(x, w);
    return usable(py) && usable(px) ? at(static_cast<int64_t>(py), static_cast<int64_t>(px)) : T(0);
  }

  static void cubic_weights(T t, T* c) {
    const T a = static_cast<T>(-0.75);
    auto near = [a](T d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };            // |d| <= 1
    auto far = [a](T d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };        // 1 < |d| < 2
    c[0] = far(t + 1);
    c[1] = near(t);
    c[2] = near(1 - t);
    c[3] = far(2 - t);
  }

  T sample(T gx, T gy, int64_t mode) const {
    T x = unnormalize(gx, w), y = unnormalize(gy, h);
    if (mode == kBicubic) {
      const T x0 = std::floor(x), y0 = std::floor(y);
      T cx[4], cy[4];
      cubic_weights(x - x0, cx);
      cubic_weights(y - y0, cy);
      T sum = 0;
      for (int i = 0; i < 4; ++i) {
        T row = 0;
        for (int j = 0; j < 4; ++j) row += cx[j] * tap(y0 - 1 + static_cast<T>(i), x0 - 1 + static_cast<T>(j));
        sum += cy[i] * row;
      }
      return sum;
    }
    x = pad(x, w);
    y = pad(y, h);
    if (!usable(x) || !usable(y)) return 0;
    if (mode == kNearest) return at(static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)));
    const T x0 = std::floor(x), y0 = std::floor(y);
    const int64_t ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
    const T fx = x - x0, fy = y - y0;
    return at(iy, ix) * (1 - fx) * (1 - fy) + at(iy, ix + 1) * fx * (1 - fy) + at(iy + 1, ix) * (1 - fx) * fy +
           at(iy + 1, ix + 1) * fx * fy;
  }
};

}  // namespace

void grid_sampler_2d_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 7);
  Tensor* in = r.tensor(0);
  Tensor* grid = r.tensor(1);
  const int64_t mode = r.int_value(2);
  const int64_t padding = r.int_value(3);
  const bool align_corners = r.bool_value(4);
  Tensor* out = r.tensor(5);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() == 4 && grid->dim() == 4 && grid->size(0) == in->size(0) && grid->size(3) == 2,
                    Error::InvalidArgument, kName, "input %s must be [N, C, H, W] and grid %s [N, Ho, Wo, 2]",
                    ShapeString(*in).c_str(), ShapeString(*grid).c_str());
  KILN_KERNEL_CHECK(ctx, mode >= kBilinear && mode <= kBicubic && padding >= kZeros && padding <= kReflection,
                    Error::InvalidArgument, kName, "interpolation_mode %lld / padding_mode %lld is unknown",
                    static_cast<long long>(mode), static_cast<long long>(padding));
  KILN_KERNEL_CHECK(ctx, in->size(2) > 0 && in->size(3) > 0, Error::InvalidArgument, kName,
                    "input %s has empty planes", ShapeString(*in).c_str());
  if (!check_same_dtype(ctx, kName, *in, *grid, "input", "grid") || !check_same_dtype(ctx, kName, *in, *out, "input", "out")) {
    return;
  }
  const SizesType sizes[4] = {in->size(0), in->size(1), grid->size(1), grid->size(2)};
  if (!resize_output(ctx, kName, *out, {sizes, 4})) return;
  const int64_t batch = in->size(0), channels = in->size(1), h = in->size(2), w = in->size(3);
  const int64_t points = static_cast<int64_t>(grid->size(1)) * grid->size(2);
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t n = 0; n < batch; ++n) {
      const T* g = grid->const_data_ptr<T>() + n * points * 2;
      for (int64_t c = 0; c < channels; ++c) {
        const Sampler<T> sampler{in->const_data_ptr<T>() + (n * channels + c) * h * w, h, w, padding, align_corners};
        T* o = out->mutable_data_ptr<T>() + (n * channels + c) * points;
        for (int64_t k = 0; k < points; ++k) o[k] = sampler.sample(g[2 * k], g[2 * k + 1], mode);
      }
    }
  });
}

}  // namespace portable
}  // namespace kiln
