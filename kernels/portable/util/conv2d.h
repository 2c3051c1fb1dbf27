// 2-D convolution (NCHW, grouped, strided, padded, dilated) for aten::convolution.
//
// Two paths:
// - 1x1 kernels with stride 1 and no padding are a matrix multiply per group and image:
//   out[Cout_g x HW] = weight[Cout_g x Cin_g] * in[Cin_g x HW] (util/gemm.h).
// - Everything else (3x3, depthwise, strided) is a direct convolution that, for each
//   weight tap, adds weight * input row to an output row. The valid output range of
//   each tap is computed up front, so the inner loop has no padding checks and runs
//   over contiguous memory (stride 1) — the loop the compiler vectorises.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/gemm.h"

namespace kiln {
namespace portable {

struct Conv2dShape {
  int64_t batch, in_channels, in_h, in_w;
  int64_t out_channels, kernel_h, kernel_w, out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;
};

namespace conv_detail {

/// Output positions [lo, hi) whose input position pos * stride - pad + tap lies in
/// [0, in_size).
inline void valid_range(int64_t out_size, int64_t in_size, int64_t stride, int64_t pad,
                        int64_t tap, int64_t* lo, int64_t* hi) {
  const int64_t first = pad - tap;  // need pos * stride >= first
  *lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  const int64_t last = in_size - 1 + pad - tap;  // need pos * stride <= last
  *hi = last < 0 ? 0 : last / stride + 1;
  if (*hi > out_size) *hi = out_size;
  if (*lo > *hi) *lo = *hi;
}

template <typename T>
void fill_bias(T* out, size_t count, const T* bias, int64_t channel) {
  const T value = bias != nullptr ? bias[channel] : static_cast<T>(0);
  for (size_t i = 0; i < count; ++i) out[i] = value;
}

/// Adds the contribution of one input plane through one filter to one output plane.
template <typename T>
void accumulate_plane(const Conv2dShape& s, const T* x, const T* w, T* o) {
  for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
    int64_t oh_lo = 0, oh_hi = 0;
    valid_range(s.out_h, s.in_h, s.stride_h, s.pad_h, kh * s.dilation_h, &oh_lo, &oh_hi);
    for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
      const T* x_row = x + (oh * s.stride_h - s.pad_h + kh * s.dilation_h) * s.in_w;
      T* o_row = o + oh * s.out_w;
      for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
        int64_t lo = 0, hi = 0;
        valid_range(s.out_w, s.in_w, s.stride_w, s.pad_w, kw * s.dilation_w, &lo, &hi);
        const T wv = w[kh * s.kernel_w + kw];
        const T* xp = x_row + lo * s.stride_w - s.pad_w + kw * s.dilation_w;
        const int64_t count = hi - lo;
        T* op = o_row + lo;
        if (s.stride_w == 1) {
          for (int64_t i = 0; i < count; ++i) op[i] += wv * xp[i];
        } else {
          const int64_t sw = s.stride_w;
          for (int64_t i = 0; i < count; ++i) op[i] += wv * xp[i * sw];
        }
      }
    }
  }
}

}  // namespace conv_detail

/// out = conv(in, weight) + bias (bias may be null). Tensors are contiguous NCHW;
/// weight is [out_channels, in_channels / groups, kernel_h, kernel_w]. `out` must not
/// overlap `in`.
template <typename T>
void conv2d(const Conv2dShape& s, const T* in, const T* weight, const T* bias, T* out) {
  const int64_t cin_g = s.in_channels / s.groups;
  const int64_t cout_g = s.out_channels / s.groups;
  const size_t in_plane = static_cast<size_t>(s.in_h * s.in_w);
  const size_t out_plane = static_cast<size_t>(s.out_h * s.out_w);
  const size_t taps = static_cast<size_t>(s.kernel_h * s.kernel_w);
  const bool pointwise = s.kernel_h == 1 && s.kernel_w == 1 && s.stride_h == 1 &&
                         s.stride_w == 1 && s.pad_h == 0 && s.pad_w == 0;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      const T* x = in + (n * s.in_channels + g * cin_g) * in_plane;
      const T* w = weight + g * cout_g * cin_g * taps;
      T* o = out + (n * s.out_channels + g * cout_g) * out_plane;
      if (pointwise) {
        gemm<T>(cout_g, out_plane, cin_g, w, cin_g, x, in_plane, o, out_plane);
        if (bias != nullptr) {
          for (int64_t co = 0; co < cout_g; ++co) {
            const T b = bias[g * cout_g + co];
            T* row = o + co * out_plane;
            for (size_t i = 0; i < out_plane; ++i) row[i] += b;
          }
        }
        continue;
      }
      for (int64_t co = 0; co < cout_g; ++co) {
        T* o_plane = o + co * out_plane;
        conv_detail::fill_bias(o_plane, out_plane, bias, g * cout_g + co);
        for (int64_t ci = 0; ci < cin_g; ++ci) {
          conv_detail::accumulate_plane(s, x + ci * in_plane, w + (co * cin_g + ci) * taps, o_plane);
        }
      }
    }
  }
}

}  // namespace portable
}  // namespace kiln
