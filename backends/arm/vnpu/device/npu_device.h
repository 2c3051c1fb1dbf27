// EthosUDevice: the register-accurate device behind the C interface (ethos_u_device.h) —
// the register file, reset, the command register and the interrupt — plus a side channel
// for the host's tools: the virtual NPU's per-operation observer and records and its
// totals, which hardware does not show through registers but the per-layer report, ETDump's
// NPU rows and the benchmarks need.
//
// Semantics (from the public programmer's model; what is simplified is said where):
// - Power-on and RESET: every register to its reset value (STATUS reads "reset in
//   progress" until the reset completes, CMD has the clock/power Q enables set); a RESET
//   write takes PROT to the privilege and security level it asks for. During a reset only
//   STATUS can be read (the rest reads 0) and writes are ignored.
// - CMD: reads back what was last written. clear_irq drops STATUS.irq_raised and
//   pmu_irq_raised; clear_irq_history clears those bits of the IRQ history; stop_request
//   stops a stream still running (not at its end); transition_to_running starts the stream
//   at QBASE unless the NPU runs or a bus or parse fault (cleared by reset only) is latched.
// - A stream runs to completion when it starts (the device has no clock); its end becomes
//   visible at once unless a fault was injected (kiln_npu_fault). On completion STATUS
//   shows cmd_end_reached (NPU_OP_STOP was reached), bus_status (an access outside the
//   memory, a write to read-only memory, or a command stream outside the memory),
//   cmd_parse_error (a command the NPU cannot parse or a register value it cannot use), or
//   the Ethos-U55/U65's weight decoder fault; QREAD the byte offset it stopped at; the IRQ
//   history the OR of the NPU_OP_IRQ masks (their interrupts merge with the completion's).
//   A stream that asks for more work than the virtual NPU's bounds (a branch loop) never
//   completes, like a looping NPU: the driver's timeout and reset recover it.
// - Writing QBASE or QSIZE while stopped clears cmd_end_reached; writes to QBASE, QSIZE
//   and the base pointers while running are ignored.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/vnpu/device/bus_memory.h"
#include "backends/arm/vnpu/device/cycle_estimate.h"
#include "backends/arm/vnpu/device/device_identity.h"
#include "backends/arm/vnpu/device/ethos_u_device.h"
#include "backends/arm/vnpu/device/pmu_model.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::vnpu::device {

class EthosUDevice final {
 public:
  /// A powered-on NPU of `identity` with no memory on its bus yet; `work_memory` must
  /// outlive it. `reset_status_reads`: see kiln_npu_device_config.
  EthosUDevice(const DeviceIdentity& identity, Span<uint8_t> work_memory,
               kiln_npu_irq_callback irq, void* irq_context, uint32_t reset_status_reads);

  /// Replaces the memory map (BusMemory::set's errors); InvalidState while a stream runs.
  Error set_memory(Span<const MemoryRange> ranges);

  /// True for a word-aligned offset inside the architecture's register window.
  bool is_register(uint32_t offset) const;
  /// Register access; callers check is_register() first.
  uint32_t read(uint32_t offset);
  void write(uint32_t offset, uint32_t value);

  /// The next stream started gets `fault` (kiln_npu_fault).
  void inject_fault(kiln_npu_fault fault, uint32_t status_reads);

  // ---- side channel (tracing; not part of the programmer's model) ----

  /// Shows `observer` every operation of the next streams (its OpRecord with the cycle
  /// estimate filled in); nullptr stops it.
  void set_operation_observer(OperationObserver* observer) { trace_observer_ = observer; }
  /// Records up to records.size() operations of each next stream (cycles included).
  void set_op_records(Span<OpRecord> records) { records_ = records; }
  /// Operations the last stream executed (may exceed the records span).
  size_t num_records() const { return num_records_; }
  /// The virtual NPU's totals of the last stream (operations, MACs, bytes per region).
  const Counters& last_counters() const { return last_counters_; }
  /// Streams started since the device was made (tells a caller whether the side channel
  /// describes its invocation).
  uint64_t streams_started() const { return streams_started_; }
  const DeviceIdentity& identity() const { return identity_; }

 private:
  void reset(uint32_t requested_prot);
  void advance_reset();
  void start();
  void finish(uint32_t status_bits);
  void complete_pending();
  void raise_irq();
  void lower_irq();
  void write_cmd(uint32_t value);
  uint32_t read_register(uint32_t offset) const;
  void write_register(uint32_t offset, uint32_t value);
  uint32_t port_of(uint32_t memory_config) const;
  Activity activity_of(const Counters& counters, uint64_t active_cycles, uint32_t command_bytes) const;
  bool running() const;

  DeviceIdentity identity_;
  const ethos_u::regs::ArchRegisters& arch_;
  CycleModel cycles_;
  VirtualNpu npu_;
  BusMemory memory_;
  PmuModel pmu_;
  kiln_npu_irq_callback irq_;
  void* irq_context_;
  uint32_t reset_status_reads_;

  // Registers.
  uint32_t status_ = 0, cmd_ = 0, prot_ = 0;
  uint32_t qbase_lo_ = 0, qbase_hi_ = 0, qsize_ = 0, qread_ = 0, qconfig_ = 0;
  uint32_t regioncfg_ = 0, lock_ = 0;
  uint32_t basep_[ethos_u::regs::kNumBasePointers][2] = {};
  uint32_t memory_config_[ethos_u::regs::kNumMemoryConfigs] = {};
  uint32_t axi_sram_ = 0, axi_ext_ = 0;

  // Progress of a reset and of a stream whose completion is not visible yet.
  uint32_t reset_reads_left_ = 0;
  kiln_npu_fault next_fault_ = KILN_NPU_FAULT_NONE;
  uint32_t next_fault_reads_ = 0;
  bool pending_ = false, hung_ = false;
  uint32_t pending_reads_left_ = 0, pending_status_ = 0;
  Activity pending_activity_;

  // Side channel.
  OperationObserver* trace_observer_ = nullptr;
  Span<OpRecord> records_;
  size_t num_records_ = 0;
  Counters last_counters_;
  uint64_t streams_started_ = 0;
};

/// The device behind a C handle (for the side channel).
EthosUDevice& device_of(kiln_npu_device* handle);

}  // namespace kiln::vnpu::device
