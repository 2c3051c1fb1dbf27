// The two adjoints of conv2d (util/conv2d.h), for transposed convolution and
// convolution_backward.
//
// A Conv2dShape always describes a forward convolution: its "input" side (in_*,
// in_channels) is the large one, its "output" side (out_*, out_channels) the small
// one, and output position o reads input position o * stride - pad + tap. The
// weight is [out_channels, in_channels / groups, kernel_h, kernel_w] in both adjoints.
// - conv2d_transpose scatters the output side back into the input side: a transposed
//   convolution (ConvTranspose) and the input gradient of a convolution.
// - conv2d_weight_grad correlates the two sides: the weight gradient.
// Like conv2d, both compute each tap's valid range up front, so the inner loops have
// no bounds checks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/conv2d.h"

namespace kiln {
namespace portable {

namespace conv_detail {

/// in_plane += w (*) o_plane scattered through every tap (one input and one output channel).
template <typename T>
void scatter_plane(const Conv2dShape& s, const T* o, const T* w, T* x) {
  for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
    int64_t oh_lo = 0, oh_hi = 0;
    valid_range(s.out_h, s.in_h, s.stride_h, s.pad_h, kh * s.dilation_h, &oh_lo, &oh_hi);
    for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
      const T* o_row = o + oh * s.out_w;
      T* x_row = x + (oh * s.stride_h - s.pad_h + kh * s.dilation_h) * s.in_w;
      for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
        int64_t lo = 0, hi = 0;
        valid_range(s.out_w, s.in_w, s.stride_w, s.pad_w, kw * s.dilation_w, &lo, &hi);
        const T wv = w[kh * s.kernel_w + kw];
        T* xp = x_row + lo * s.stride_w - s.pad_w + kw * s.dilation_w;
        const T* op = o_row + lo;
        const int64_t count = hi - lo;
        const int64_t sw = s.stride_w;
        for (int64_t i = 0; i < count; ++i) xp[i * sw] += wv * op[i];
      }
    }
  }
}

/// Sum over both planes of o_plane[pos] * in_plane[pos * stride - pad + tap], per tap.
template <typename T>
void correlate_plane(const Conv2dShape& s, const T* x, const T* o, T* w) {
  for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
    int64_t oh_lo = 0, oh_hi = 0;
    valid_range(s.out_h, s.in_h, s.stride_h, s.pad_h, kh * s.dilation_h, &oh_lo, &oh_hi);
    for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
      int64_t lo = 0, hi = 0;
      valid_range(s.out_w, s.in_w, s.stride_w, s.pad_w, kw * s.dilation_w, &lo, &hi);
      T sum = 0;
      for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
        const T* xp = x + (oh * s.stride_h - s.pad_h + kh * s.dilation_h) * s.in_w + lo * s.stride_w -
                      s.pad_w + kw * s.dilation_w;
        const T* op = o + oh * s.out_w + lo;
        for (int64_t i = 0; i < hi - lo; ++i) sum += op[i] * xp[i * s.stride_w];
      }
      w[kh * s.kernel_w + kw] += sum;
    }
  }
}

}  // namespace conv_detail

/// in = conv2d_transpose(out, weight) + bias: the input side of `s` (contiguous NCHW,
/// [batch, in_channels, in_h, in_w]) from its output side. bias (in_channels entries)
/// may be null. `in` must not overlap `out`.
template <typename T>
void conv2d_transpose(const Conv2dShape& s, const T* out, const T* weight, const T* bias, T* in) {
  const int64_t cin_g = s.in_channels / s.groups;
  const int64_t cout_g = s.out_channels / s.groups;
  const size_t in_plane = static_cast<size_t>(s.in_h * s.in_w);
  const size_t out_plane = static_cast<size_t>(s.out_h * s.out_w);
  const size_t taps = static_cast<size_t>(s.kernel_h * s.kernel_w);
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t c = 0; c < s.in_channels; ++c) {
      conv_detail::fill_bias(in + (n * s.in_channels + c) * in_plane, in_plane, bias, c);
    }
    for (int64_t g = 0; g < s.groups; ++g) {
      for (int64_t co = 0; co < cout_g; ++co) {
        const T* o = out + (n * s.out_channels + g * cout_g + co) * out_plane;
        for (int64_t ci = 0; ci < cin_g; ++ci) {
          T* x = in + (n * s.in_channels + g * cin_g + ci) * in_plane;
          conv_detail::scatter_plane(s, o, weight + ((g * cout_g + co) * cin_g + ci) * taps, x);
        }
      }
    }
  }
}

/// weight_grad = d(sum(out_grad * conv2d(in)))/d(weight): [out_channels,
/// in_channels / groups, kernel_h, kernel_w], overwritten.
template <typename T>
void conv2d_weight_grad(const Conv2dShape& s, const T* in, const T* out_grad, T* weight_grad) {
  const int64_t cin_g = s.in_channels / s.groups;
  const int64_t cout_g = s.out_channels / s.groups;
  const size_t in_plane = static_cast<size_t>(s.in_h * s.in_w);
  const size_t out_plane = static_cast<size_t>(s.out_h * s.out_w);
  const size_t taps = static_cast<size_t>(s.kernel_h * s.kernel_w);
  const size_t count = static_cast<size_t>(s.out_channels * cin_g) * taps;
  for (size_t i = 0; i < count; ++i) weight_grad[i] = 0;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      for (int64_t co = 0; co < cout_g; ++co) {
        const T* o = out_grad + (n * s.out_channels + g * cout_g + co) * out_plane;
        for (int64_t ci = 0; ci < cin_g; ++ci) {
          const T* x = in + (n * s.in_channels + g * cin_g + ci) * in_plane;
          conv_detail::correlate_plane(s, x, o, weight_grad + ((g * cout_g + co) * cin_g + ci) * taps);
        }
      }
    }
  }
}

}  // namespace portable
}  // namespace kiln
