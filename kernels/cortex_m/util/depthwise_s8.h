// The inner loops of the int8 depthwise convolution (kernels/cortex_m/
// op_quantized_depthwise_conv2d.cpp), in the flavour flavour.h picks.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/conv_args.h"

namespace kiln {
namespace cortex_m {

/// Channels a depthwise_chunk() call takes at most (their constant terms live on the stack).
constexpr int32_t kDepthwiseChunk = 64;

/// Any depth multiplier, scalar: the reference path. One image (NHWC) of `a`.
void depthwise_generic(const ConvArgs& a, int32_t multiplier, const int8_t* image, const int8_t* weight,
                       const int32_t* bias, int8_t* out);

/// Depth multiplier 1: channels [c0, c0 + count) of every output pixel of one image,
/// count <= kDepthwiseChunk.
void depthwise_chunk(const ConvArgs& a, int32_t c0, int32_t count, const int8_t* image, const int8_t* weight,
                     const int32_t* bias, int8_t* out);

}  // namespace cortex_m
}  // namespace kiln
