#include "backends/arm/vnpu/device/bus_memory.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu::device {

Error BusMemory::set(Span<const MemoryRange> ranges) {
  if (ranges.size() > kMaxMemoryRanges) {
    KILN_LOG(Error, "NPU device: %zu memory ranges given; it holds at most %zu", ranges.size(),
             kMaxMemoryRanges);
    return Error::InvalidArgument;
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    const MemoryRange& r = ranges[i];
    if ((r.host == nullptr && r.size != 0) || r.bus_address + r.size < r.bus_address ||
        (r.size != 0 && ((reinterpret_cast<uintptr_t>(r.host) ^ r.bus_address) & 3u) != 0)) {
      KILN_LOG(Error, "NPU device: memory range %zu (bus 0x%llx, %zu bytes) is invalid", i,
               static_cast<unsigned long long>(r.bus_address), r.size);
      return Error::InvalidArgument;
    }
    for (size_t j = 0; j < i; ++j) {
      const MemoryRange& o = ranges[j];
      if (r.size != 0 && o.size != 0 && r.bus_address < o.bus_address + o.size &&
          o.bus_address < r.bus_address + r.size) {
        KILN_LOG(Error, "NPU device: memory ranges %zu and %zu overlap on the bus", j, i);
        return Error::InvalidArgument;
      }
    }
  }
  for (size_t i = 0; i < ranges.size(); ++i) ranges_[i] = ranges[i];
  count_ = ranges.size();
  return Error::Ok;
}

const MemoryRange* BusMemory::find(uint64_t address) const {
  for (size_t i = 0; i < count_; ++i) {
    const MemoryRange& r = ranges_[i];
    if (address >= r.bus_address && address - r.bus_address < r.size) return &r;
  }
  return nullptr;
}

Region BusMemory::region_at(uint64_t base) const {
  const MemoryRange* range = find(base);
  if (range == nullptr) return Region{};
  const size_t offset = static_cast<size_t>(base - range->bus_address);
  return Region{range->host + offset, range->size - offset, range->read_only};
}

bool BusMemory::words_at(uint64_t address, uint64_t bytes, Span<const uint32_t>* out) const {
  if (address % 4 != 0 || bytes % 4 != 0) return false;
  if (bytes == 0) {
    *out = {};
    return true;
  }
  const MemoryRange* range = find(address);
  if (range == nullptr || bytes > range->size - (address - range->bus_address)) return false;
  const uint8_t* first = range->host + (address - range->bus_address);
  // Word aligned: set() keeps host and bus addresses congruent modulo 4.
  *out = {reinterpret_cast<const uint32_t*>(first), static_cast<size_t>(bytes / 4)};
  return true;
}

}  // namespace kiln::vnpu::device
