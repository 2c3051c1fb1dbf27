#include "backends/arm/vnpu/weight_layout.h"

#include "backends/arm/vnpu/weight_decoder.h"
#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

uint32_t round_up(uint32_t v, uint32_t m) { return (v + m - 1) / m * m; }
uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

// Calls visit(ofm, ky, kx, ifm, valid) for every weight slot in stream order.
template <typename Visit>
void traverse(const WeightLayout& l, Visit&& visit) {
  const uint32_t ifm_block_depth = (l.part_kernel_first || l.ifm_bits == 16) ? 16u : 32u;
  const uint32_t decomp_h = 8u / l.dilation_y;
  const uint32_t decomp_w = 8u / l.dilation_x;
  const uint32_t ifm_depth = l.depthwise ? 1u : l.ifm_depth;
  for (uint32_t ofm_block = 0; ofm_block < l.ofm_depth; ofm_block += l.ofm_block_depth) {
    const uint32_t block_depth = min_u32(l.ofm_block_depth, l.ofm_depth - ofm_block);
    const uint32_t ifm_steps = l.depthwise ? 1u : ifm_depth;
    for (uint32_t ifm_block = 0; ifm_block < ifm_steps; ifm_block += ifm_block_depth) {
      uint32_t ifm_block_size;
      if (l.depthwise) {
        ifm_block_size = l.ifm_ublock_depth;
      } else if (l.part_kernel_first) {
        ifm_block_size = min_u32(ifm_block_depth, ifm_depth - ifm_block);
      } else {
        ifm_block_size = ifm_block_depth;
      }
      for (uint32_t sub_y = 0; sub_y < l.kernel_height; sub_y += decomp_h) {
        const uint32_t sub_h = min_u32(l.kernel_height - sub_y, decomp_h);
        for (uint32_t sub_x = 0; sub_x < l.kernel_width; sub_x += decomp_w) {
          const uint32_t sub_w = min_u32(l.kernel_width - sub_x, decomp_w);
          uint32_t elements = sub_w * sub_h;
          if (l.part_kernel_first) {
            elements = round_up(elements, l.ifm_bits == 16 ? 2u : 4u);
          } else if (l.depthwise) {
            elements = round_up(elements, 4u);
          }
          const uint32_t outer = l.part_kernel_first ? ifm_block_size : 1u;
          const uint32_t inner = l.part_kernel_first ? 1u : ifm_block_size;
          const uint32_t ifm_ublock_z_count = l.depthwise ? 1u : l.ifm_ublock_depth;
          for (uint32_t ifm_outer = 0; ifm_outer < outer; ifm_outer += l.ifm_ublock_depth) {
            for (uint32_t ofm_ublock = 0; ofm_ublock < block_depth; ofm_ublock += l.ofm_ublock_depth) {
              for (uint32_t e = 0; e < elements; ++e) {
                const uint32_t kx = e % sub_w;
                const uint32_t ky = e / sub_w;
                for (uint32_t ifm_inner = 0; ifm_inner < inner; ifm_inner += l.ifm_ublock_depth) {
                  for (uint32_t oz = 0; oz < l.ofm_ublock_depth; ++oz) {
                    for (uint32_t iz = 0; iz < ifm_ublock_z_count; ++iz) {
                      const uint32_t ifm = ifm_block + ifm_inner + ifm_outer + iz;
                      const uint32_t ofm = ofm_block + ofm_ublock + oz;
                      const bool valid = ifm < ifm_depth && ofm < l.ofm_depth && ky < sub_h &&
                                         ofm < ofm_block + block_depth;
                      visit(ofm, sub_y + ky, sub_x + kx, ifm, valid);
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

}  // namespace

void ublock_depths(const Config& config, uint32_t* ifm_ublock, uint32_t* ofm_ublock) {
  *ifm_ublock = 8;
  *ofm_ublock = (config.arch == Arch::EthosU55 && config.macs <= 32) ? 4u : 8u;
}

Error load_dense_weights(OpContext& ctx, const WeightLayout& l, const int16_t** dense) {
  const RegisterFile& regs = ctx.regs;
  const uint32_t region = regs.get(Cmd0::WeightRegion) & 0xffu;
  const uint64_t base = regs.get(Cmd1::WeightBase);
  const uint64_t length = regs.get(Cmd1::WeightLength);
  if (region >= ctx.regions.size() || ctx.regions[region].data == nullptr ||
      base + length > ctx.regions[region].size) {
    KILN_LOG(Error, "weight stream 0x%llx+%llu lies outside region %u (%zu regions given)",
             static_cast<unsigned long long>(base), static_cast<unsigned long long>(length),
             region, ctx.regions.size());
    return Error::NpuRegionOutOfBounds;
  }
  uint64_t slots = 0;
  traverse(l, [&](uint32_t, uint32_t, uint32_t, uint32_t, bool) { ++slots; });
  const uint32_t ifm_depth = l.depthwise ? 1u : l.ifm_depth;
  const uint64_t dense_count = uint64_t{l.ofm_depth} * l.kernel_height * l.kernel_width * ifm_depth;
  int16_t* decoded = ctx.scratch.allocate<int16_t>(static_cast<size_t>(slots));
  int16_t* out = ctx.scratch.allocate<int16_t>(static_cast<size_t>(dense_count));
  if (decoded == nullptr || out == nullptr) {
    KILN_LOG(Error, "work memory too small: %llu weight slots + %llu dense weights (int16)",
             static_cast<unsigned long long>(slots), static_cast<unsigned long long>(dense_count));
    return Error::OutOfResources;
  }
  size_t count = 0;
  Error err = decode_weight_stream(
      Span<const uint8_t>(ctx.regions[region].data + base, static_cast<size_t>(length)),
      Span<int16_t>(decoded, static_cast<size_t>(slots)), ctx.scratch, &count);
  if (err != Error::Ok) return err;
  if (count < slots) {
    KILN_LOG(Error, "weight stream decodes to %zu weights, the operation needs %llu", count,
             static_cast<unsigned long long>(slots));
    return Error::NpuWeightStreamInvalid;
  }
  ctx.bytes_read[region] += length;
  ctx.record.bytes_read += length;
  size_t i = 0;
  const uint32_t kh = l.kernel_height, kw = l.kernel_width;
  traverse(l, [&](uint32_t o, uint32_t y, uint32_t x, uint32_t c, bool valid) {
    if (valid) out[((size_t{o} * kh + y) * kw + x) * ifm_depth + c] = decoded[i];
    ++i;
  });
  *dense = out;
  return Error::Ok;
}

}  // namespace kiln::vnpu
