// The driver's use of the NPU's PMU: before a stream starts, reset the cycle counter and
// the event counters and set them to count NPU_ACTIVE and the AXI ports' read and write
// data beats; after it ends, read them into NpuCounters.
//
// The counters, in this order as far as the architecture has them (four on the
// Ethos-U55/U65, eight on the U85): NPU_ACTIVE, AXI0 read beats, AXI0 write beats, AXI1
// read beats, AXI1 write beats. On a four-counter NPU the AXI1 (external port) writes are
// not counted: boards put what the NPU writes (the scratch arena) on AXI0.
#pragma once

#include "backends/arm/registers/ethos_u_registers.h"
#include "backends/arm/runtime/npu_driver.h"
#include "backends/arm/runtime/npu_register_port.h"

namespace kiln::ethos_u {

/// Resets, programs and enables the cycle counter and the event counters.
void start_pmu(NpuRegisterPort& port, const regs::ArchRegisters& arch);

/// Reads PMCCNTR and the event counters into `counters` (cycles, active_cycles,
/// axi_read_beats, axi_write_beats) and stops counting. A counter that wrapped is logged.
void read_pmu(NpuRegisterPort& port, const regs::ArchRegisters& arch, NpuCounters* counters);

}  // namespace kiln::ethos_u
