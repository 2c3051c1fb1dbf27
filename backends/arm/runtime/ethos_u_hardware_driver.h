// EthosUHardwareDriver: the register-level Ethos-U driver. It programs an Ethos-U55, U65
// or U85 through its registers (backends/arm/registers/ethos_u_registers.h) behind one
// seam, NpuRegisterPort: volatile MMIO at the board's base address on silicon and in
// firmware, the virtual NPU's register-accurate device on the host (host_virtual_npu.h),
// where every delegated program runs through it.
//
//   static kiln::ethos_u::MmioRegisterPort port(NPU_BASE);
//   static kiln::ethos_u::EthosUHardwareDriver npu(port, board_config);
//   // the NPU's interrupt handler calls npu.handle_irq()
//   if (npu.init() == kiln::Error::Ok) kiln::ethos_u::register_ethos_u_backend(&npu);
//
// init(): a soft reset into the configured security/privilege level (bounded wait, PROT
// checked), then ID and CONFIG are read: product, MACs/cycle, version (logged).
//
// invoke(), in order:
//  1. read the driver payload (npu_driver_payload.h) and check the stream's configuration
//     word and the program's target name against CONFIG/ID (NpuConfigMismatch, naming both);
//  2. translate the command stream and every region to bus addresses through the board's
//     NPU-visible memory (NpuRegionOutsideMemory) and check their 16-byte alignment
//     (NpuMisalignedBase); refuse if the NPU is running (NpuBusy);
//  3. clean the data cache over what the NPU reads; write the memory configuration
//     (REGIONCFG, QCONFIG, AXI limits / memory attributes), QBASE, QSIZE, BASEP0-7;
//     reset and start the PMU's counters; set CMD.transition_to_running;
//  4. wait for the interrupt (the board's wait hook, e.g. WFI, or polling STATUS), bounded
//     by the timeout (NpuTimeout);
//  5. read STATUS and QREAD: a bus abort, a parse error, a weight decoder fault or a stream
//     that stopped before its end is a named error (npu_completion.h);
//  6. read the PMU into NpuCounters (cycles, active cycles, AXI read/write beats);
//     invalidate the data cache over the writable regions.
// Any failure after the NPU was started soft-resets it, so the next inference works.
//
// One NPU runs one command stream at a time: callers on several threads serialize invoke()
// (the host does, host_virtual_npu.h). Per-operation notifications (NpuInvocation::listener)
// are not available from hardware: the driver ignores them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/runtime/ethos_u_driver_config.h"
#include "backends/arm/runtime/npu_driver.h"
#include "backends/arm/runtime/npu_identity.h"
#include "backends/arm/runtime/npu_register_port.h"
#include "runtime/core/error.h"

namespace kiln::ethos_u {

class EthosUHardwareDriver final : public NpuDriver {
 public:
  /// `port` and the memory `config.npu_memory` points at must outlive the driver.
  EthosUHardwareDriver(NpuRegisterPort& port, const EthosUDriverConfig& config)
      : port_(port), config_(config) {}

  /// Resets the NPU and identifies it. NpuResetFailed when the reset does not complete or
  /// PROT does not show the levels asked for; NotSupported for an unknown product.
  Error init();

  /// The NPU init() found (valid after init() succeeded).
  const NpuIdentity& identity() const { return identity_; }

  /// Replaces the board's NPU-visible memory (config.npu_memory); the host's virtual NPU
  /// changes it per invocation. `windows` must outlive the next invocations.
  void set_npu_memory(Span<const NpuMemoryWindow> windows) { config_.npu_memory = windows; }

  /// The interrupt handler's entry point: notes that the NPU raised its interrupt and
  /// clears it. Call it from the NPU's interrupt service routine (or, on the host, the
  /// device's interrupt callback).
  void handle_irq();

  const char* name() const override { return "ethos-u"; }
  /// True once init() has succeeded.
  bool is_available() const override { return initialized_; }
  size_t region_alignment() const override { return regs::kBaseAlignment; }
  /// Runs one command stream (see the steps above). InvalidState before init().
  Error invoke(const NpuInvocation& invocation, NpuCounters* counters) override;

 private:
  bool wait_for_reset();
  Error soft_reset();
  void write_memory_config();
  Error check_stream(const NpuInvocation& invocation, Span<const uint32_t>* commands);
  Error program_addresses(const NpuInvocation& invocation, Span<const uint32_t> commands);
  Error wait_for_completion();
  void clean(const NpuInvocation& invocation, Span<const uint32_t> commands) const;
  void invalidate(const NpuInvocation& invocation) const;
  uint32_t clock_power() const;

  NpuRegisterPort& port_;
  EthosUDriverConfig config_;
  NpuIdentity identity_;
  bool initialized_ = false;
  /// Set by handle_irq() (from an interrupt handler: hence volatile).
  volatile bool irq_seen_ = false;
};

}  // namespace kiln::ethos_u
