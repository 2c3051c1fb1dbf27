// What the device does on CMD.transition_to_running: fetch the command stream at QBASE,
// resolve the regions from the base pointers, run the stream on the virtual NPU, and turn
// how it ended into STATUS, QREAD, the PMU's counts and the interrupt.
#include "backends/arm/vnpu/device/npu_device.h"

#include "backends/arm/vnpu/operation_observer.h"
#include "runtime/platform/log.h"

namespace kiln::vnpu::device {
namespace {

namespace regs = ethos_u::regs;

/// Puts the cycle estimate on every operation, adds it up, and passes the operation on to
/// the tracing observer and the records.
class EstimatingObserver final : public OperationObserver {
 public:
  EstimatingObserver(const CycleModel& model, Span<OpRecord> records, OperationObserver* next)
      : model_(model), records_(records), next_(next) {}

  void on_operation(size_t index, const OpRecord& record, const OfmView* ofm) override {
    OpRecord estimated = record;
    estimated.cycles = operation_cycles(model_, record);
    active_cycles_ += estimated.cycles;
    if (index < records_.size()) records_[index].cycles = estimated.cycles;
    if (next_ != nullptr) next_->on_operation(index, estimated, ofm);
  }

  uint64_t active_cycles() const { return active_cycles_; }

 private:
  CycleModel model_;
  Span<OpRecord> records_;
  OperationObserver* next_;
  uint64_t active_cycles_ = 0;
};

uint64_t beats(uint64_t bytes, uint32_t bytes_per_beat) {
  return bytes / bytes_per_beat + (bytes % bytes_per_beat != 0 ? 1 : 0);
}

/// STATUS bits for how the virtual NPU's run ended (see npu_device.h). `hang` is set for a
/// stream that would never end on hardware.
uint32_t status_of(Error error, const StreamEnd& end, const regs::ArchRegisters& arch, bool* hang) {
  *hang = false;
  switch (error) {
    case Error::Ok: return end.stop_reached ? regs::status::kCmdEndReached : 0;
    case Error::NpuRegionOutOfBounds:
    case Error::NpuRegionReadOnly: return regs::status::kBusError;
    case Error::NpuWeightStreamInvalid: return arch.weight_fault_status;
    case Error::NpuWorkLimitExceeded: *hang = true; return 0;
    default: return regs::status::kCmdParseError;
  }
}

}  // namespace

uint32_t EthosUDevice::port_of(uint32_t memory_config) const {
  return regs::port_of_memory_config(arch_, memory_config, memory_config_[memory_config & 3u]);
}

Activity EthosUDevice::activity_of(const Counters& counters, uint64_t active_cycles,
                                   uint32_t command_bytes) const {
  Activity activity;
  const uint32_t beat = arch_.axi_bytes_per_beat;
  for (uint32_t r = 0; r < regs::kNumBasePointers; ++r) {
    const uint32_t port = port_of(regs::region_config(regioncfg_, r));
    activity.read_beats[port] += beats(counters.bytes_read[r], beat);
    activity.write_beats[port] += beats(counters.bytes_written[r], beat);
  }
  activity.read_beats[port_of(qconfig_)] += beats(command_bytes, beat);
  activity.active_cycles = active_cycles;
  activity.cycles = active_cycles + transfer_cycles(cycles_, command_bytes);
  return activity;
}

void EthosUDevice::start() {
  status_ = (status_ | regs::status::kRunning) & ~regs::status::kCmdEndReached;
  const kiln_npu_fault fault = next_fault_;
  const uint32_t fault_reads = next_fault_reads_;
  next_fault_ = KILN_NPU_FAULT_NONE;
  ++streams_started_;
  num_records_ = 0;
  last_counters_ = Counters();
  qread_ = 0;

  const uint64_t qbase = (uint64_t{qbase_hi_} << 32) | qbase_lo_;
  Span<const uint32_t> words;
  if (!memory_.words_at(qbase, qsize_, &words)) {
    KILN_LOG(Error, "NPU device: the command stream (QBASE 0x%llx, QSIZE %u) is not in the NPU's "
             "memory: bus error", static_cast<unsigned long long>(qbase), qsize_);
    pending_activity_ = Activity();
    const uint32_t where = (port_of(qconfig_) << regs::status::kFaultingInterfaceShift);
    finish(regs::status::kBusError | where);  // faulting channel 0: the command read
    return;
  }
  Region regions[regs::kNumBasePointers];
  for (uint32_t n = 0; n < regs::kNumBasePointers; ++n) {
    regions[n] = memory_.region_at((uint64_t{basep_[n][1]} << 32) | basep_[n][0]);
  }
  EstimatingObserver observer(cycles_, records_, trace_observer_);
  npu_.set_operation_observer(&observer);
  StreamEnd end;
  const Error error = npu_.run_registers(words, regions, &last_counters_, records_, &num_records_, &end);
  npu_.set_operation_observer(nullptr);

  qread_ = end.words_read * 4;
  status_ |= uint32_t{end.irq_mask} << regs::status::kIrqHistoryShift;
  pending_activity_ = activity_of(last_counters_, observer.active_cycles(), qread_);
  bool hang = false;
  const uint32_t bits = status_of(error, end, arch_, &hang);
  if (hang || fault == KILN_NPU_FAULT_HANG) {
    hung_ = true;  // running, no interrupt, until a reset or a stop request
    return;
  }
  if (fault == KILN_NPU_FAULT_SLOW && fault_reads > 0) {
    pending_ = true;
    pending_reads_left_ = fault_reads;
    pending_status_ = bits;
    return;
  }
  finish(bits);
}

void EthosUDevice::complete_pending() {
  pending_ = false;
  finish(pending_status_);
}

void EthosUDevice::finish(uint32_t status_bits) {
  status_ = (status_ & ~regs::status::kRunning) | status_bits;
  if (pmu_.count(pending_activity_)) status_ |= regs::status::kPmuIrqRaised;
  raise_irq();
}

}  // namespace kiln::vnpu::device
