#include "backends/arm/vnpu/device/pmu_model.h"

namespace kiln::vnpu::device {
namespace {

namespace pmu = ethos_u::regs::pmu;
namespace event = ethos_u::regs::event;

/// Bits of PMCNTEN/PMOVS/PMINT that exist: the event counters and the cycle counter.
uint32_t counter_bits(uint32_t num_event_counters) {
  return ((1u << num_event_counters) - 1u) | pmu::kCycleCounterBit;
}

}  // namespace

void PmuModel::reset() {
  pmcr_ = 0;
  enabled_ = overflow_ = interrupt_enabled_ = 0;
  cycle_counter_ = 0;
  cycle_config_ = axi_channel_ = 0;
  for (uint32_t i = 0; i < kMaxEventCounters; ++i) counters_[i] = types_[i] = 0;
}

bool PmuModel::owns(uint32_t offset) const {
  const uint32_t n = arch_->num_event_counters;
  return (offset >= arch_->pmcr && offset <= arch_->pmcr + pmu::kPmcaxiChan) ||
         (offset >= arch_->pmevcntr0 && offset < arch_->pmevcntr0 + 4 * n) ||
         (offset >= arch_->pmevtyper0 && offset < arch_->pmevtyper0 + 4 * n);
}

uint32_t PmuModel::read(uint32_t offset) const {
  if (offset >= arch_->pmevcntr0 && offset < arch_->pmevcntr0 + 4 * arch_->num_event_counters) {
    return counters_[(offset - arch_->pmevcntr0) / 4];
  }
  if (offset >= arch_->pmevtyper0 && offset < arch_->pmevtyper0 + 4 * arch_->num_event_counters) {
    return types_[(offset - arch_->pmevtyper0) / 4];
  }
  switch (offset - arch_->pmcr) {
    case pmu::kPmcr: return pmcr_ | (arch_->num_event_counters << pmu::kPmcrNumEventCountersShift);
    case pmu::kPmcntenset:
    case pmu::kPmcntenclr: return enabled_;
    case pmu::kPmovsset:
    case pmu::kPmovsclr: return overflow_;
    case pmu::kPmintset:
    case pmu::kPmintclr: return interrupt_enabled_;
    case pmu::kPmccntrLo: return static_cast<uint32_t>(cycle_counter_);
    case pmu::kPmccntrHi: return static_cast<uint32_t>(cycle_counter_ >> 32);
    case pmu::kPmccntrCfg: return cycle_config_;
    case pmu::kPmcaxiChan: return axi_channel_;
    default: return 0;
  }
}

void PmuModel::write(uint32_t offset, uint32_t value) {
  const uint32_t n = arch_->num_event_counters;
  if (offset >= arch_->pmevcntr0 && offset < arch_->pmevcntr0 + 4 * n) {
    counters_[(offset - arch_->pmevcntr0) / 4] = value;
    return;
  }
  if (offset >= arch_->pmevtyper0 && offset < arch_->pmevtyper0 + 4 * n) {
    types_[(offset - arch_->pmevtyper0) / 4] = value & pmu::kEventTypeMask;
    return;
  }
  const uint32_t bits = value & counter_bits(n);
  switch (offset - arch_->pmcr) {
    case pmu::kPmcr:
      // The reset bits act and read as zero; the counter count is read only.
      if ((value & pmu::kPmcrEventCounterReset) != 0) {
        for (uint32_t i = 0; i < kMaxEventCounters; ++i) counters_[i] = 0;
      }
      if ((value & pmu::kPmcrCycleCounterReset) != 0) cycle_counter_ = 0;
      pmcr_ = value & (pmu::kPmcrCountEnable | pmu::kPmcrMaskEnable);
      break;
    case pmu::kPmcntenset: enabled_ |= bits; break;
    case pmu::kPmcntenclr: enabled_ &= ~bits; break;
    case pmu::kPmovsset: overflow_ |= bits; break;
    case pmu::kPmovsclr: overflow_ &= ~bits; break;
    case pmu::kPmintset: interrupt_enabled_ |= bits; break;
    case pmu::kPmintclr: interrupt_enabled_ &= ~bits; break;
    case pmu::kPmccntrLo:
      cycle_counter_ = (cycle_counter_ & ~uint64_t{0xffffffffu}) | value;
      break;
    case pmu::kPmccntrHi:
      cycle_counter_ = ((uint64_t{value} << 32) | (cycle_counter_ & 0xffffffffu)) & pmu::kCycleCounterMask;
      break;
    case pmu::kPmccntrCfg: cycle_config_ = value & 0x03ff03ffu; break;
    case pmu::kPmcaxiChan: axi_channel_ = value & 0x7ffu; break;
    default: break;
  }
}

uint64_t PmuModel::events_of(uint32_t type, const Activity& activity) const {
  switch (type) {
    case event::kCycle: return activity.cycles;
    case event::kNpuActive: return activity.active_cycles;
    case event::kAxi0ReadBeats: return activity.read_beats[0];
    case event::kAxi1ReadBeats: return activity.read_beats[1];
    case event::kAxi0WriteBeats: return activity.write_beats[0];
    case event::kAxi1WriteBeats: return activity.write_beats[1];
    default: return 0;
  }
}

bool PmuModel::count(const Activity& activity) {
  if ((pmcr_ & pmu::kPmcrCountEnable) == 0) return false;
  uint32_t wrapped = 0;
  if ((enabled_ & pmu::kCycleCounterBit) != 0) {
    const uint64_t sum = cycle_counter_ + activity.cycles;
    if (sum > pmu::kCycleCounterMask || sum < cycle_counter_) wrapped |= pmu::kCycleCounterBit;
    cycle_counter_ = sum & pmu::kCycleCounterMask;
  }
  for (uint32_t i = 0; i < arch_->num_event_counters; ++i) {
    if ((enabled_ & (1u << i)) == 0) continue;
    const uint64_t sum = uint64_t{counters_[i]} + events_of(types_[i], activity);
    if (sum > 0xffffffffu) wrapped |= 1u << i;
    counters_[i] = static_cast<uint32_t>(sum);
  }
  overflow_ |= wrapped;
  return (wrapped & interrupt_enabled_) != 0;
}

}  // namespace kiln::vnpu::device
