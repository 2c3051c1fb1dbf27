// Where the NPU sees CPU memory: the board's windows of NPU-addressable memory turn a
// pointer into the bus address the driver writes to QBASE and the base pointers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/runtime/ethos_u_driver_config.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace kiln::ethos_u {

/// The bus address of `data` when [data, data + bytes) lies inside one window and below
/// 2^address_bits. NpuRegionOutsideMemory (logged, naming `what`) otherwise.
Result<uint64_t> npu_bus_address(Span<const NpuMemoryWindow> windows, const void* data, size_t bytes,
                                 uint32_t address_bits, const char* what);

}  // namespace kiln::ethos_u
