// The device's performance monitoring unit: PMCR, the enable / overflow / interrupt-enable
// set-clear pairs, the 48-bit cycle counter and the architecture's event counters (4 on the
// Ethos-U55/U65, 8 on the U85) with their event types, at the architecture's offsets.
// Counters count only while PMCR.cnt_en is set and their PMCNTEN bit is; a counter that
// wraps sets its PMOVS bit and, with its PMINT bit set, raises the PMU interrupt.
//
// Events counted (everything the device knows; other event numbers count nothing):
// CYCLE and the cycle counter (the estimate of cycle_estimate.h, command fetch included),
// NPU_ACTIVE (the operations' cycles), AXI0/AXI1 read and write data beats (bytes over the
// port a region's REGIONCFG entry selects, divided by the port width, rounded up per region).
// Not modelled: PMCCNTR_CFG start/stop events and PMCAXI_CHAN's channel filter (stored and
// read back; the counters ignore them), NPU_OP_PMU_MASK (PMCR.mask_en).
#pragma once

#include <cstdint>

#include "backends/arm/registers/ethos_u_registers.h"

namespace kiln::vnpu::device {

/// What one command stream did, in the units the PMU counts.
struct Activity {
  uint64_t cycles = 0;
  uint64_t active_cycles = 0;
  /// Data beats per AXI port (0, 1).
  uint64_t read_beats[2] = {};
  uint64_t write_beats[2] = {};
};

class PmuModel final {
 public:
  static constexpr uint32_t kMaxEventCounters = 8;

  explicit PmuModel(const ethos_u::regs::ArchRegisters& arch) : arch_(&arch) { reset(); }

  /// Every PMU register back to its reset value.
  void reset();

  /// True when `offset` is one of the PMU's registers.
  bool owns(uint32_t offset) const;
  uint32_t read(uint32_t offset) const;
  void write(uint32_t offset, uint32_t value);

  /// Adds what a stream did to the enabled counters. True if a counter wrapped with its
  /// overflow interrupt enabled (the device then raises STATUS.pmu_irq_raised).
  bool count(const Activity& activity);

 private:
  uint64_t events_of(uint32_t event, const Activity& activity) const;

  const ethos_u::regs::ArchRegisters* arch_;
  uint32_t pmcr_ = 0;
  uint32_t enabled_ = 0, overflow_ = 0, interrupt_enabled_ = 0;
  uint64_t cycle_counter_ = 0;
  uint32_t cycle_config_ = 0, axi_channel_ = 0;
  uint32_t counters_[kMaxEventCounters] = {};
  uint32_t types_[kMaxEventCounters] = {};
};

}  // namespace kiln::vnpu::device
