// The order in which the NPU consumes decoded weights, and the op's weights in dense form.
//
// The stream is ordered per OFM block (OFM_BLK_DEPTH_M1 + 1 channels), then per IFM block
// (32 channels for 8-bit depth-first, 16 for part-kernel-first or 16-bit IFMs), then per
// sub-kernel (at most 8x8 taps, 4x4 when dilated), then — depth-first — per OFM micro-block,
// kernel element, IFM micro-block, OFM channel, IFM channel; part-kernel-first moves the IFM
// micro-block loop outside the OFM micro-block loop and pads the kernel elements to a
// multiple of 4 (8-bit) or 2 (16-bit); depthwise pads them to a multiple of 4. Positions
// outside the kernel/depth carry zeros that the hardware skips.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/ops/op_context.h"

namespace kiln::vnpu {

struct WeightLayout {
  uint32_t ofm_depth, kernel_height, kernel_width, ifm_depth;
  uint32_t ofm_block_depth;
  uint32_t ifm_ublock_depth, ofm_ublock_depth;
  bool depthwise, part_kernel_first;
  uint32_t ifm_bits;
  uint32_t dilation_y, dilation_x;
};

/// Micro-block depths of the configuration (IFM, OFM).
void ublock_depths(const Config& config, uint32_t* ifm_ublock, uint32_t* ofm_ublock);

/// Decodes the op's weight stream (WEIGHT_REGION/BASE/LENGTH) and returns the weights as
/// dense[ofm][ky][kx][ifm] (ifm depth 1 for depthwise) in scratch memory.
Error load_dense_weights(OpContext& ctx, const WeightLayout& layout, const int16_t** dense);

}  // namespace kiln::vnpu
