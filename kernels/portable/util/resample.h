// Output sizes and source coordinates of PyTorch's interpolation ops
// (upsample_bilinear2d, _upsample_bilinear2d_aa).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

/// The output-to-input coordinate scale of one dim: with align_corners the corner
/// pixels' centres line up ((in - 1) / (out - 1)); otherwise 1 / scale_factor when
/// the caller gave one (> 0), else in / out. Rounded to T as PyTorch does.
template <typename T>
T resample_scale(int64_t in, int64_t out, bool align_corners, double scale_factor) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  if (scale_factor > 0) return static_cast<T>(1.0 / scale_factor);
  return static_cast<T>(in) / static_cast<T>(out);
}

/// The planes and sizes of a 4-D resampling: reads output_size (2 entries) or
/// scale_factors (2 entries, out = floor(in * scale)), exactly one of them, and
/// resizes out to [N, C, out_h, out_w].
struct ResampleShape {
  int64_t planes, in_h, in_w, out_h, out_w;
  double scale_h, scale_w;  // the scale factors given, or 0
};

inline bool make_resample_shape(KernelContext& ctx, const char* op, const Tensor& in, bool has_size,
                                Span<const int64_t> output_size, bool has_scales, Span<const double> scales,
                                Tensor& out, ResampleShape* s) {
  if (in.dim() != 4) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "input must be 4-D, got %s", ShapeString(in).c_str());
    return false;
  }
  if (has_size == has_scales || (has_size ? output_size.size() : scales.size()) != 2) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "give either output_size or scale_factors, with 2 entries");
    return false;
  }
  s->planes = static_cast<int64_t>(in.size(0)) * in.size(1);
  s->in_h = in.size(2);
  s->in_w = in.size(3);
  s->scale_h = has_scales ? scales[0] : 0;
  s->scale_w = has_scales ? scales[1] : 0;
  if (has_scales) {
    const double h = std::floor(static_cast<double>(s->in_h) * scales[0]);
    const double w = std::floor(static_cast<double>(s->in_w) * scales[1]);
    s->out_h = h >= 0 && h <= INT32_MAX ? static_cast<int64_t>(h) : -1;
    s->out_w = w >= 0 && w <= INT32_MAX ? static_cast<int64_t>(w) : -1;
  } else {
    s->out_h = output_size[0];
    s->out_w = output_size[1];
  }
  if (s->out_h <= 0 || s->out_w <= 0 || s->out_h > INT32_MAX || s->out_w > INT32_MAX || s->in_h <= 0 || s->in_w <= 0) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "cannot resample %s to %lld x %lld", ShapeString(in).c_str(),
                     static_cast<long long>(s->out_h), static_cast<long long>(s->out_w));
    return false;
  }
  const SizesType sizes[4] = {in.size(0), in.size(1), static_cast<SizesType>(s->out_h), static_cast<SizesType>(s->out_w)};
  return check_same_dtype(ctx, op, in, out, "input", "out") && resize_output(ctx, op, out, {sizes, 4});
}

}  // namespace portable
}  // namespace kiln
