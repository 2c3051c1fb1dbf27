// Room for the register-level Ethos-U driver (not implemented yet: Kiln has no board with
// an Ethos-U in its test setup, and QEMU models none).
//
// A firmware build implements NpuDriver with the NPU's registers and registers the
// delegate with it, exactly as the host does with the virtual NPU:
//
//   static kiln::ethos_u::EthosUHardwareDriver npu(ETHOS_U_BASE_ADDRESS);
//   npu.init();                                  // reset, check ID/CONFIG, enable IRQ
//   kiln::ethos_u::register_ethos_u_backend(&npu);
//
// What invoke() must do, in order (register names from the Ethos-U55 TRM):
// 1. Check the COP1 header of the command stream (word 0 "COP1", then the optimizer's
//    config word) against the CONFIG register: MACs/cycle and command stream version.
//    A mismatch is NpuConfigMismatch.
// 2. Clean the data cache over the regions the NPU reads (region 0 weights, the inputs in
//    region 1) so that the NPU sees what the CPU wrote.
// 3. Write BASEP0..BASEP<n> (64-bit, low/high words) with each region's address as the
//    NPU sees it (a CPU-to-bus address translation on some SoCs), write QBASE/QSIZE with
//    the register command stream (after the COP1 header) and set CMD.transition_to_running.
// 4. Sleep until the NPU's interrupt (STATUS.irq_raised; a timeout bounds the wait), then
//    read STATUS: bus_status / cmd_parse_error / cmd_end_reached. A parse error is
//    NpuUnknownCommand, a bus error NpuRegionOutOfBounds.
// 5. Invalidate the data cache over region 1 (and 2) so the CPU reads the outputs.
// 6. Fill NpuCounters from the PMU: PMCCNTR (cycles) and the event counters programmed
//    at init (e.g. NPU_ACTIVE, AXI read/write beats per port).
// region_alignment() is 16: base pointers and QBASE must be 16-byte aligned.
#pragma once

#include "backends/arm/runtime/npu_driver.h"
