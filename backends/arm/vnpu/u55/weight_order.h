// Ethos-U55/U65 weight stream order. The stream is ordered per OFM block (OFM_BLK_DEPTH
// channels), then per IFM block (32 channels for 8-bit depth-first, 16 for part-kernel-first
// or 16-bit IFMs), then per sub-kernel (at most 8x8 taps, 4x4 when dilated), then -
// depth-first - per OFM micro-block, kernel element, IFM micro-block, OFM channel, IFM
// channel; part-kernel-first moves the IFM micro-block loop outside the OFM micro-block loop
// and pads the kernel elements to a multiple of 4 (8-bit) or 2 (16-bit); depthwise pads them
// to a multiple of 4. Positions outside the kernel/depth carry zeros that the hardware skips.
// With two cores (Ethos-U65-512) core n's stream covers OFM channels n, n+2, ... as if they
// were a volume of their own, with OFM blocks of ceil((block - n) / 2) channels.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/op_desc.h"
#include "backends/arm/vnpu/weight_layout.h"

namespace kiln::vnpu::u55 {

/// Calls visit(ofm, ky, kx, ifm, valid) for every slot of stream `stream` in stream order.
template <typename Visit>
void traverse(const WeightDesc& d, const WeightShape& l, uint32_t stream, Visit&& visit) {
  const auto min_u32 = [](uint32_t a, uint32_t b) { return a < b ? a : b; };
  const auto round_up = [](uint32_t v, uint32_t m) { return (v + m - 1) / m * m; };
  const bool depthwise = d.traversal == WeightTraversal::Depthwise;
  const bool part_kernel_first = d.traversal == WeightTraversal::PartKernelFirst;
  const uint32_t cores = d.cores;
  // This core's channels as a volume of their own.
  const uint32_t ofm_depth = (l.ofm_depth + cores - 1 - stream) / cores;
  const uint32_t ofm_block_depth = (d.ofm_block_depth + cores - 1 - stream) / cores;
  const uint32_t ifm_block_depth = d.ifm_block_depth;
  const uint32_t decomp_h = 8u / l.dilation_y;
  const uint32_t decomp_w = 8u / l.dilation_x;
  const uint32_t ifm_depth = depthwise ? 1u : l.ifm_depth;
  const uint32_t ifm_ublock = d.ifm_ublock_depth, ofm_ublock = d.ofm_ublock_depth;
  if (ofm_block_depth == 0) return;
  for (uint32_t ofm_block = 0; ofm_block < ofm_depth; ofm_block += ofm_block_depth) {
    const uint32_t block_depth = min_u32(ofm_block_depth, ofm_depth - ofm_block);
    for (uint32_t ifm_block = 0; ifm_block < ifm_depth; ifm_block += ifm_block_depth) {
      uint32_t ifm_block_size;
      if (depthwise) {
        ifm_block_size = ifm_ublock;
      } else if (part_kernel_first) {
        ifm_block_size = min_u32(ifm_block_depth, ifm_depth - ifm_block);
      } else {
        ifm_block_size = ifm_block_depth;
      }
      for (uint32_t sub_y = 0; sub_y < l.kernel_height; sub_y += decomp_h) {
        const uint32_t sub_h = min_u32(l.kernel_height - sub_y, decomp_h);
        for (uint32_t sub_x = 0; sub_x < l.kernel_width; sub_x += decomp_w) {
          const uint32_t sub_w = min_u32(l.kernel_width - sub_x, decomp_w);
          uint32_t elements = sub_w * sub_h;
          if (part_kernel_first) {
            elements = round_up(elements, l.ifm_bits == 16 ? 2u : 4u);
          } else if (depthwise) {
            elements = round_up(elements, 4u);
          }
          const uint32_t outer = part_kernel_first ? ifm_block_size : 1u;
          const uint32_t inner = part_kernel_first ? 1u : ifm_block_size;
          const uint32_t ifm_z_count = depthwise ? 1u : ifm_ublock;
          for (uint32_t ifm_outer = 0; ifm_outer < outer; ifm_outer += ifm_ublock) {
            for (uint32_t ofm_u = 0; ofm_u < block_depth; ofm_u += ofm_ublock) {
              for (uint32_t e = 0; e < elements; ++e) {
                const uint32_t kx = e % sub_w;
                const uint32_t ky = e / sub_w;
                for (uint32_t ifm_inner = 0; ifm_inner < inner; ifm_inner += ifm_ublock) {
                  for (uint32_t oz = 0; oz < ofm_ublock; ++oz) {
                    for (uint32_t iz = 0; iz < ifm_z_count; ++iz) {
                      const uint32_t ifm = ifm_block + ifm_inner + ifm_outer + iz;
                      const uint32_t ofm = ofm_block + ofm_u + oz;
                      const bool valid = ifm < ifm_depth && ofm < ofm_depth && ky < sub_h &&
                                         ofm < ofm_block + block_depth;
                      visit(ofm * cores + stream, sub_y + ky, sub_x + kx, ifm, valid);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace kiln::vnpu::u55
