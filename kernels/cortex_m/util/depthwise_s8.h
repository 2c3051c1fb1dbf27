// The loops of the int8 depthwise convolution (kernels/cortex_m/
// op_quantized_depthwise_conv2d.cpp), one implementation per flavour (flavour.h):
// depthwise_s8_mve.cpp (Helium), depthwise_s8_dsp.cpp (SIMD32), depthwise_s8.cpp
// (portable C++, and the scalar reference every flavour falls back to).
//
// Output channel o reads input channel o / multiplier; weights are [KH, KW, C_out].
// Every flavour computes acc = bias + sum over the window of (x + input_offset) * w,
// then requantize(), the output offset and the clamp, as CMSIS-NN does.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/conv_args.h"

namespace kiln {
namespace cortex_m {

/// Every output of one image (NHWC) of `a`, any depth multiplier, in the fastest way the
/// flavour has for it.
void depthwise_s8(const ConvArgs& a, int32_t multiplier, const int8_t* image, const int8_t* weight,
                  const int32_t* bias, int8_t* out);

/// The same, one output at a time in plain C++: the reference path, and every flavour's
/// fallback for what its fast path does not take.
void depthwise_s8_scalar(const ConvArgs& a, int32_t multiplier, const int8_t* image, const int8_t* weight,
                         const int32_t* bias, int8_t* out);

/// The output columns whose window lies inside the image horizontally: [first, last),
/// empty when there are none. (Rows: the same with the vertical sizes.)
struct InteriorRange {
  int32_t first = 0;
  int32_t last = 0;
};

/// The outputs along one axis whose window needs no padding: input size `in`, output
/// size `out`, and the axis' kernel size, stride, padding and dilation.
InteriorRange interior_range(int32_t in, int32_t out, int32_t kernel, int32_t stride, int32_t padding,
                             int32_t dilation);

}  // namespace cortex_m
}  // namespace kiln
