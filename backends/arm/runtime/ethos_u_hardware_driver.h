// EthosUHardwareDriver: the register-level Ethos-U driver, as a skeleton. Every entry
// point of NpuDriver exists and compiles for Cortex-M, but none is implemented yet: Kiln
// has no board with an Ethos-U in its test setup, and QEMU models none. Each returns
// Error::NotImplemented (or reports the NPU unavailable) with a log line, so that a
// firmware linked with it fails by name instead of silently. It is the template a real
// driver fills in, and the delegate registers it exactly as the host does the virtual
// NPU:
//
//   static kiln::ethos_u::EthosUHardwareDriver npu(ETHOS_U_BASE_ADDRESS);
//   if (npu.init() == kiln::Error::Ok) kiln::ethos_u::register_ethos_u_backend(&npu);
//
// init() must: reset the NPU (CMD/RESET registers), read ID and CONFIG (MACs/cycle, the
// command stream version) and keep them, program the PMU event counters and enable the
// interrupt.
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
//
// One NPU runs one command stream at a time: a driver used by several threads (an RTOS)
// serializes invoke().
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/runtime/npu_driver.h"

namespace kiln::ethos_u {

class EthosUHardwareDriver final : public NpuDriver {
 public:
  /// `base_address`: where the NPU's registers are mapped (SoC-specific).
  explicit EthosUHardwareDriver(uintptr_t base_address) : base_address_(base_address) {}

  /// Resets and identifies the NPU. NotImplemented (logged) in this skeleton.
  Error init();

  const char* name() const override { return "ethos-u-hardware"; }
  /// False until init() has succeeded (so always, in this skeleton; logged).
  bool is_available() const override;
  size_t region_alignment() const override { return kRegionAlignment; }
  /// Runs the stream on the NPU. NotImplemented (logged) in this skeleton.
  Error invoke(const NpuInvocation& invocation, NpuCounters* counters) override;

  /// Base pointers and QBASE must be multiples of this.
  static constexpr size_t kRegionAlignment = 16;

 private:
  uintptr_t base_address_;
  bool initialized_ = false;
};

}  // namespace kiln::ethos_u
