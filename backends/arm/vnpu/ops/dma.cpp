// NPU_OP_DMA_START: copies DMA0_LEN bytes from DMA0_SRC to DMA0_DST. Either side may be a
// region or the NPU's internal memory (SHRAM, where lookup tables are loaded). Only the 1D
// stride mode is modelled; Vela emits 2D/3D only for Ethos-U85.
#include "backends/arm/vnpu/ops/op_context.h"

#include <cstring>

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

struct DmaEnd {
  uint8_t* data;
  size_t size;
  uint32_t counter_index;
};

Error resolve(const OpContext& ctx, uint32_t region_reg, uint64_t address, uint64_t length,
              const char* side, DmaEnd* end) {
  const uint32_t region = region_reg & 0xffu;
  const bool internal = ((region_reg >> 8) & 1u) != 0;
  const uint32_t stride_mode = (region_reg >> 9) & 3u;
  if (stride_mode != 0) {
    KILN_LOG(Error, "DMA %s stride mode %u (2D/3D) is not modelled", side, stride_mode);
    return Error::NpuInvalidRegister;
  }
  uint8_t* base;
  size_t size;
  if (internal) {
    base = ctx.internal_memory.data();
    size = ctx.internal_memory.size();
    end->counter_index = kMaxRegions;
  } else {
    if (region >= ctx.regions.size()) {
      KILN_LOG(Error, "DMA %s region %u: only %zu regions given", side, region, ctx.regions.size());
      return Error::NpuRegionOutOfBounds;
    }
    base = ctx.regions[region].data;
    size = ctx.regions[region].size;
    end->counter_index = region;
  }
  if (base == nullptr || address > size || length > size - address) {
    if (internal) {
      KILN_LOG(Error, "DMA %s 0x%llx+%llu lies outside the NPU's internal memory (SHRAM, %zu bytes)",
               side, static_cast<unsigned long long>(address), static_cast<unsigned long long>(length), size);
    } else {
      KILN_LOG(Error, "DMA %s 0x%llx+%llu lies outside region %u of %zu bytes", side,
               static_cast<unsigned long long>(address), static_cast<unsigned long long>(length), region, size);
    }
    return Error::NpuRegionOutOfBounds;
  }
  end->data = base + address;
  end->size = static_cast<size_t>(length);
  return Error::Ok;
}

}  // namespace

Error run_dma(OpContext& ctx) {
  const RegisterFile& regs = ctx.regs;
  const uint64_t length = regs.get(Cmd1::Dma0Len);
  DmaEnd src, dst;
  Error err = resolve(ctx, regs.get(Cmd0::Dma0SrcRegion), regs.get(Cmd1::Dma0Src), length, "source", &src);
  if (err != Error::Ok) return err;
  const uint32_t dst_region = regs.get(Cmd0::Dma0DstRegion);
  err = resolve(ctx, dst_region, regs.get(Cmd1::Dma0Dst), length, "destination", &dst);
  if (err != Error::Ok) return err;
  if (((dst_region >> 8) & 1u) == 0 && ctx.regions[dst_region & 0xffu].read_only) {
    KILN_LOG(Error, "DMA destination is in read-only region %u", dst_region & 0xffu);
    return Error::NpuRegionReadOnly;
  }
  err = charge_work(ctx, length / 16u, "NPU_OP_DMA_START");
  if (err != Error::Ok) return err;
  ctx.record.macs = 0;
  if (length > 0) std::memmove(dst.data, src.data, src.size);
  ctx.bytes_read[src.counter_index] += length;
  ctx.bytes_written[dst.counter_index] += length;
  ctx.record.bytes_read += length;
  ctx.record.bytes_written += length;
  return Error::Ok;
}

}  // namespace kiln::vnpu
