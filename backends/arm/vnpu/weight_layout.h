// An operation's weights in dense form, decoded from its weight streams.
//
// Each architecture orders the encoded weights its own way (u55/weight_order.h,
// u85/weight_order.h: OFM blocks, IFM blocks, sub-kernels, micro-blocks, and on the U85 the
// channels of each core); the stream order is a pure function of the op's shape and the
// WeightDesc the decoder filled. load_dense_weights decodes every stream (the compressed
// format of weight_decoder.h, or the Ethos-U85 fast format of fast_weight_decoder.h) and puts
// each weight where the order says.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/ops/op_context.h"

namespace kiln::vnpu {

/// The logical weight volume of an operation (OHWI; I = 1 for depthwise).
struct WeightShape {
  uint32_t ofm_depth = 1, kernel_height = 1, kernel_width = 1, ifm_depth = 1;
  uint32_t ifm_bits = 8;
  uint32_t stride_y = 1, stride_x = 1;
  uint32_t dilation_y = 1, dilation_x = 1;
};

/// Decodes the op's weight streams (ctx.op.weights) and returns the weights as
/// dense[ofm][ky][kx][ifm] int16 in scratch memory. NpuWeightStreamInvalid for a stream
/// that is malformed or too short, NpuRegionOutOfBounds for one outside its region.
Error load_dense_weights(OpContext& ctx, const WeightShape& shape, const int16_t** dense);

/// The int16 slots load_dense_weights() decodes the streams into besides the dense
/// weights (the longest stream, or all of them when the fast format interleaves cores):
/// from the registers alone, for sizing the work memory.
uint64_t decoded_weight_slots(const WeightDesc& desc, const WeightShape& shape);

}  // namespace kiln::vnpu
