// Ethos-U85 weight stream order (the order the U85's weight decoders consume; Vela's U85
// weight encoder writes it).
//
// Per OFM block (OFM_BLK_DEPTH channels); per IFM block, forward on even OFM blocks and
// backward on odd ones (a snake, so that consecutive OFM blocks share the IFM block at the
// turn); per sub-kernel (at most 8x8 taps, 4x4 when dilated; columns outer, rows inner);
// per IFM micro-block; per OFM micro-block; then over the kernel elements of the sub-kernel
// - part-kernel-first and depthwise walk them stride phase by stride phase, each row in
// alternating direction; depth-first walks them as stride 1 - and per element over IFM
// channels in steps of 8 (16 for sparse weights, 1 for depthwise), OFM channels in groups of
// four (core n takes groups n, n + cores, ... of every OFM micro-block), and the IFM
// channels of the step. Kernel elements are padded with zeros to a multiple of 5 (8-bit
// part-kernel-first) or 10 (16-bit or sparse part-kernel-first, depthwise); depthwise adds
// extra zeros after every 10 elements on the larger configurations.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/op_desc.h"
#include "backends/arm/vnpu/weight_layout.h"

namespace kiln::vnpu::u85 {

/// The parameters of the order that follow from the WeightDesc and the shape.
struct OrderParams {
  uint32_t stride_y, stride_x;
  uint32_t sub_kernel_round;
  uint32_t ifm_ublock_depth;
  uint32_t inner_step;
  uint32_t depthwise_padding;
};

inline OrderParams order_params(const WeightDesc& d, const WeightShape& l) {
  const bool ifm16 = l.ifm_bits == 16;
  OrderParams p{l.stride_y, l.stride_x, 1, d.ifm_block_depth, d.sparse ? 16u : 8u, 0};
  switch (d.traversal) {
    case WeightTraversal::PartKernelFirst:
      p.sub_kernel_round = (ifm16 || d.sparse) ? 10u : 5u;
      p.ifm_ublock_depth = ifm16 && !d.sparse ? 8u : d.ifm_block_depth;
      break;
    case WeightTraversal::DepthFirst:
      p.stride_y = p.stride_x = 1;
      break;
    case WeightTraversal::Depthwise:
      p.sub_kernel_round = 10;
      p.ifm_ublock_depth = 1;
      p.inner_step = 1;
      break;
  }
  p.depthwise_padding = (!ifm16 && d.macs <= 256) ? 0u : (d.macs <= 512 ? 2u : 6u);
  return p;
}

/// Calls visit(ofm, ky, kx, ifm, valid) for every slot of core `stream`'s weights in order.
template <typename Visit>
void traverse(const WeightDesc& d, const WeightShape& l, uint32_t stream, Visit&& visit) {
  const auto min_u32 = [](uint32_t a, uint32_t b) { return a < b ? a : b; };
  const OrderParams p = order_params(d, l);
  const bool depthwise = d.traversal == WeightTraversal::Depthwise;
  const uint32_t cores = d.cores;
  const uint32_t ofm_depth = l.ofm_depth;
  const uint32_t ifm_depth = depthwise ? 1u : l.ifm_depth;
  const uint32_t ifm_block_depth = d.ifm_block_depth;
  const uint32_t ofm_ublock = d.ofm_ublock_depth;
  const uint32_t decomp_w = 8u / l.dilation_x, decomp_h = 8u / l.dilation_y;
  const uint32_t ifm_blocks = depthwise ? 1u : (ifm_depth + ifm_block_depth - 1) / ifm_block_depth;
  const auto zeros = [&](uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) visit(0u, 0u, 0u, 0u, false);
  };
  uint32_t ofm_block_index = 0;
  for (uint32_t ofm_block = 0; ofm_block < ofm_depth; ofm_block += d.ofm_block_depth, ++ofm_block_index) {
    const uint32_t block_depth = min_u32(d.ofm_block_depth, ofm_depth - ofm_block);
    for (uint32_t b = 0; b < ifm_blocks; ++b) {
      const uint32_t ifm_block = ((ofm_block_index & 1u) == 0 ? b : ifm_blocks - 1 - b) * ifm_block_depth;
      const uint32_t ifm_block_size = min_u32(ifm_block_depth, ifm_depth - ifm_block);
      for (uint32_t sub_x = 0; sub_x < l.kernel_width; sub_x += decomp_w) {
        const uint32_t sub_w = min_u32(l.kernel_width - sub_x, decomp_w);
        for (uint32_t sub_y = 0; sub_y < l.kernel_height; sub_y += decomp_h) {
          const uint32_t sub_h = min_u32(l.kernel_height - sub_y, decomp_h);
          const uint32_t outer_limit = depthwise ? 1u : ifm_block_size;
          for (uint32_t ifm_outer = 0; ifm_outer < outer_limit; ifm_outer += p.ifm_ublock_depth) {
            for (uint32_t ofm_outer = 0; ofm_outer < block_depth; ofm_outer += ofm_ublock) {
              const uint32_t elements = sub_w * sub_h;
              uint32_t left = (elements + p.sub_kernel_round - 1) / p.sub_kernel_round * p.sub_kernel_round;
              for (uint32_t sy = 0; sy < p.stride_y; ++sy) {
                const uint32_t strided_h = (sub_h + p.stride_y - 1 - sy) / p.stride_y;
                for (uint32_t sx = 0; sx < p.stride_x; ++sx) {
                  const uint32_t strided_w = (sub_w + p.stride_x - 1 - sx) / p.stride_x;
                  for (uint32_t ky = 0; ky < strided_h; ++ky) {
                    for (uint32_t kxi = 0; kxi < strided_w; ++kxi) {
                      const uint32_t kx = (ky & 1u) == 0 ? kxi : strided_w - 1 - kxi;
                      const uint32_t wx = sub_x + sx + kx * p.stride_x;
                      const uint32_t wy = sub_y + sy + ky * p.stride_y;
                      --left;
                      for (uint32_t ifm_inner = 0; ifm_inner < p.ifm_ublock_depth; ifm_inner += p.inner_step) {
                        for (uint32_t oz = stream * 4u; oz < ofm_ublock; oz += 4u * cores) {
                          for (uint32_t o4 = 0; o4 < 4u; ++o4) {
                            for (uint32_t iz = 0; iz < p.inner_step; ++iz) {
                              const uint32_t ifm = ifm_block + ifm_outer + ifm_inner + iz;
                              const uint32_t ofm = ofm_block + ofm_outer + oz + o4;
                              visit(ofm, wy, wx, ifm, ifm < ifm_depth && ofm < ofm_depth);
                            }
                          }
                        }
                      }
                      if (depthwise && left % p.sub_kernel_round == 0) {
                        zeros(p.depthwise_padding * ofm_ublock / cores);
                      }
                    }
                  }
                }
              }
              if (left > 0) {
                zeros((left + (depthwise ? p.depthwise_padding : 0u)) * p.ifm_ublock_depth * ofm_ublock / cores);
              }
            }
          }
        }
      }
    }
  }
}

/// Slots of the fast format's interleaving block: every core's order is cut into blocks of
/// this many weights, and the single stream holds core 0's block, core 1's, ... in turn.
inline uint32_t fast_block_slots(const WeightDesc& d, const WeightShape& l) {
  const OrderParams p = order_params(d, l);
  return d.ofm_ublock_depth * p.ifm_ublock_depth * p.sub_kernel_round / d.cores;
}

}  // namespace kiln::vnpu::u85
