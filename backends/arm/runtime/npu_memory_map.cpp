#include "backends/arm/runtime/npu_memory_map.h"

#include "runtime/platform/log.h"

namespace kiln::ethos_u {

Result<uint64_t> npu_bus_address(Span<const NpuMemoryWindow> windows, const void* data, size_t bytes,
                                 uint32_t address_bits, const char* what) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(data);
  for (const NpuMemoryWindow& w : windows) {
    if (address < w.cpu_address || address - w.cpu_address > w.size || bytes > w.size - (address - w.cpu_address)) {
      continue;
    }
    const uint64_t bus = w.bus_address + (address - w.cpu_address);
    if (address_bits < 64 && (bus + bytes) > (uint64_t{1} << address_bits)) break;
    return bus;
  }
  KILN_LOG(Error, "ethos-u: %s (%zu bytes at %p) lies outside the memory the NPU can address", what, bytes, data);
  return Error::NpuRegionOutsideMemory;
}

}  // namespace kiln::ethos_u
