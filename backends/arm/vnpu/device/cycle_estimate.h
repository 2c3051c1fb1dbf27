// Kiln's cycle estimate for the device's PMU: a simple model, written down, of what one
// NPU operation costs — not Vela's performance model, and not a measurement.
//
// For one operation (an OpRecord of the virtual NPU):
//   compute  = ceil(MACs / MACs-per-cycle)               convolution, depthwise, vector product
//            = ceil(elements / (MACs-per-cycle / 16))    pooling, elementwise, resize (at least
//                                                        one element per cycle)
//            = 0                                         DMA
//   transfer = ceil((bytes read + bytes written) / AXI bytes per beat)
//   cycles   = max(compute, transfer) + 32               (32: per-operation setup)
// NPU_ACTIVE counts the operations' cycles; the cycle counter adds the command fetch,
// ceil(command bytes read / AXI bytes per beat). MACs per cycle are the configuration's
// (all cores); AXI bytes per beat the architecture's port width (8 on the Ethos-U55, 16 on
// the U65 and U85): one beat per cycle, compute and transfer overlapped within an
// operation, operations one after another.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/virtual_npu.h"

namespace kiln::vnpu::device {

/// The figures of one NPU configuration the estimate uses.
struct CycleModel {
  uint32_t macs_per_cycle = 1;
  uint32_t bytes_per_cycle = 1;
};

/// Fixed cost of starting one operation (block configuration, pipeline fill).
constexpr uint64_t kOperationSetupCycles = 32;
/// Pooling, elementwise and resize step MACs-per-cycle / this many elements per cycle.
constexpr uint32_t kMacsPerElement = 16;

/// Cycles of one operation by the formula above.
uint64_t operation_cycles(const CycleModel& model, const OpRecord& record);

/// Cycles to move `bytes` over an AXI port (operands, results, the command stream).
uint64_t transfer_cycles(const CycleModel& model, uint64_t bytes);

}  // namespace kiln::vnpu::device
