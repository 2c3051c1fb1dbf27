// NPU_OP_DMA_START: copies `length` bytes per unit from the source to the destination.
// Either side may be a region or the NPU's internal memory (where lookup tables are loaded).
// 1D: one unit. 2D: size0 units, stride0 apart on each side. 3D: size1 planes of those,
// stride1 apart. Indexed (Ethos-U85 gather/scatter): on the indexed side the unit number
// along the first dimension is an int32 read from the index table (consecutive entries,
// plus index_skip1 bytes after each plane), which must lie in 0..index_max.
// Every unit is checked against its memory before it is copied.
#include "backends/arm/vnpu/ops/op_context.h"

#include <cstring>

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

struct DmaEnd {
  uint8_t* data;
  size_t size;
  uint32_t counter_index;
  const char* name;
};

Error resolve(const OpContext& ctx, const DmaSide& side, const char* name, bool write, DmaEnd* end) {
  end->name = name;
  if (side.internal) {
    end->data = ctx.internal_memory.data();
    end->size = ctx.internal_memory.size();
    end->counter_index = kMaxRegions;
    return Error::Ok;
  }
  if (side.region >= ctx.regions.size() || ctx.regions[side.region].data == nullptr) {
    KILN_LOG(Error, "DMA %s region %u has no memory (%zu regions given; a base pointer outside the "
             "NPU's memory gives none)", name, side.region, ctx.regions.size());
    return Error::NpuRegionOutOfBounds;
  }
  if (write && ctx.regions[side.region].read_only) {
    KILN_LOG(Error, "DMA destination is in read-only region %u", side.region);
    return Error::NpuRegionReadOnly;
  }
  end->data = ctx.regions[side.region].data;
  end->size = ctx.regions[side.region].size;
  end->counter_index = side.region;
  return Error::Ok;
}

// base + a * stride_a + b * stride_b without wrapping; false if it passes 2^62.
bool offset_of(uint64_t base, uint64_t a, uint64_t stride_a, uint64_t b, uint64_t stride_b, uint64_t* out) {
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  if ((stride_a != 0 && a > kLimit / stride_a) || (stride_b != 0 && b > kLimit / stride_b)) return false;
  const uint64_t sum = base + a * stride_a + b * stride_b;
  if (base > kLimit || a * stride_a > kLimit || b * stride_b > kLimit) return false;
  *out = sum;
  return true;
}

Error check_range(const OpContext& ctx, const DmaEnd& end, const DmaSide& side, bool ok, uint64_t offset,
                  uint64_t length) {
  if (ok && offset <= end.size && length <= end.size - offset) return Error::Ok;
  if (side.internal) {
    KILN_LOG(Error, "DMA %s 0x%llx+%llu lies outside the NPU's internal memory (%zu bytes)", end.name,
             static_cast<unsigned long long>(offset), static_cast<unsigned long long>(length), end.size);
  } else {
    KILN_LOG(Error, "DMA %s 0x%llx+%llu lies outside region %u of %zu bytes", end.name,
             static_cast<unsigned long long>(offset), static_cast<unsigned long long>(length), side.region,
             end.size);
  }
  (void)ctx;
  return Error::NpuRegionOutOfBounds;
}

}  // namespace

Error run_dma(OpContext& ctx) {
  const DmaDesc& d = ctx.op.dma;
  DmaEnd src, dst;
  Error err = resolve(ctx, d.src, "source", false, &src);
  if (err != Error::Ok) return err;
  err = resolve(ctx, d.dst, "destination", true, &dst);
  if (err != Error::Ok) return err;
  const bool indexed = d.src.indexed || d.dst.indexed;
  const uint64_t size0 = d.size0 == 0 ? 1 : d.size0, size1 = d.size1 == 0 ? 1 : d.size1;
  const uint64_t units = size0 * size1;
  err = charge_work(ctx, units + units * (d.length / 16u), "NPU_OP_DMA_START");
  if (err != Error::Ok) return err;
  ctx.record.macs = 0;
  DmaEnd index{nullptr, 0, 0, "index table"};
  DmaSide index_side;
  index_side.region = d.index_region;
  if (indexed) {
    err = resolve(ctx, index_side, "index table", false, &index);
    if (err != Error::Ok) return err;
  }
  uint64_t index_offset = d.index_address;
  for (uint64_t i1 = 0; i1 < size1; ++i1) {
    for (uint64_t i0 = 0; i0 < size0; ++i0) {
      uint64_t row = i0;
      if (indexed) {
        err = check_range(ctx, index, index_side, true, index_offset, 4);
        if (err != Error::Ok) return err;
        const uint8_t* p = index.data + index_offset;
        const int32_t value = static_cast<int32_t>(uint32_t{p[0]} | (uint32_t{p[1]} << 8) |
                                                   (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24));
        if (value < 0 || static_cast<uint32_t>(value) > d.index_max) {
          KILN_LOG(Error, "DMA index %d (entry %llu) lies outside 0..%u", value,
                   static_cast<unsigned long long>(i1 * size0 + i0), d.index_max);
          return Error::NpuRegionOutOfBounds;
        }
        row = static_cast<uint64_t>(value);
        index_offset += 4;
        ctx.bytes_read[index.counter_index] += 4;
      }
      uint64_t s_off = 0, d_off = 0;
      const bool s_ok = offset_of(d.src.address, d.src.indexed ? row : i0, d.src.stride0, i1, d.src.stride1, &s_off);
      const bool d_ok = offset_of(d.dst.address, d.dst.indexed ? row : i0, d.dst.stride0, i1, d.dst.stride1, &d_off);
      err = check_range(ctx, src, d.src, s_ok, s_off, d.length);
      if (err == Error::Ok) err = check_range(ctx, dst, d.dst, d_ok, d_off, d.length);
      if (err != Error::Ok) return err;
      if (d.length > 0) std::memmove(dst.data + d_off, src.data + s_off, static_cast<size_t>(d.length));
    }
    index_offset += d.index_skip1;
  }
  const uint64_t bytes = units * d.length;
  ctx.bytes_read[src.counter_index] += bytes;
  ctx.bytes_written[dst.counter_index] += bytes;
  ctx.record.bytes_read += bytes;
  ctx.record.bytes_written += bytes;
  return Error::Ok;
}

}  // namespace kiln::vnpu
