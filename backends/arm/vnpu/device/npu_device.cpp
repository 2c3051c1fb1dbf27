// The register file, reset, CMD and the interrupt (the stream itself: command_stream_run.cpp).
#include "backends/arm/vnpu/device/npu_device.h"

namespace kiln::vnpu::device {
namespace {

namespace regs = ethos_u::regs;

/// Mask of the bus address bits above 32 a high-word register keeps.
uint32_t high_word_mask(const regs::ArchRegisters& arch) {
  return arch.address_bits > 32 ? (1u << (arch.address_bits - 32)) - 1u : 0u;
}

}  // namespace

EthosUDevice::EthosUDevice(const DeviceIdentity& identity, Span<uint8_t> work_memory,
                           kiln_npu_irq_callback irq, void* irq_context, uint32_t reset_status_reads)
    : identity_(identity),
      arch_(*identity.arch),
      cycles_{static_cast<uint32_t>(identity.npu.macs), identity.arch->axi_bytes_per_beat},
      npu_(identity.npu, work_memory),
      pmu_(*identity.arch),
      irq_(irq),
      irq_context_(irq_context),
      reset_status_reads_(reset_status_reads) {
  reset(0);  // power-on: user level, secure
}

Error EthosUDevice::set_memory(Span<const MemoryRange> ranges) {
  if (running()) return Error::InvalidState;
  return memory_.set(ranges);
}

bool EthosUDevice::is_register(uint32_t offset) const {
  return offset % 4 == 0 && offset < arch_.window_bytes;
}

bool EthosUDevice::running() const { return (status_ & regs::status::kRunning) != 0; }

void EthosUDevice::inject_fault(kiln_npu_fault fault, uint32_t status_reads) {
  next_fault_ = fault;
  next_fault_reads_ = status_reads;
}

void EthosUDevice::reset(uint32_t requested_prot) {
  const bool irq_was_raised = (status_ & regs::status::kIrqRaised) != 0;
  cmd_ = regs::cmd::kResetValue;
  prot_ = requested_prot & (regs::prot::kPrivileged | regs::prot::kNonSecure);
  qbase_lo_ = qbase_hi_ = qsize_ = qread_ = qconfig_ = regioncfg_ = lock_ = 0;
  for (auto& base : basep_) base[0] = base[1] = 0;
  for (uint32_t& config : memory_config_) config = 0;
  axi_sram_ = axi_ext_ = 0;
  pmu_.reset();
  pending_ = hung_ = false;  // a stream still running is abandoned
  status_ = regs::status::kResetValue;
  reset_reads_left_ = reset_status_reads_;
  if (reset_reads_left_ == 0) advance_reset();
  if (irq_was_raised) lower_irq();
}

void EthosUDevice::advance_reset() {
  if (reset_reads_left_ > 0) --reset_reads_left_;
  if (reset_reads_left_ == 0) status_ &= ~regs::status::kResetInProgress;
}

uint32_t EthosUDevice::read(uint32_t offset) {
  if (offset == regs::kStatus) {
    if ((status_ & regs::status::kResetInProgress) != 0) {
      const uint32_t during = status_;
      advance_reset();
      return during;
    }
    const uint32_t value = status_;
    if (pending_) {
      // A long job: its end shows after the reads the fault asked for.
      if (pending_reads_left_ > 0) --pending_reads_left_;
      if (pending_reads_left_ == 0) complete_pending();
    }
    return value;
  }
  if ((status_ & regs::status::kResetInProgress) != 0) return 0;
  return read_register(offset);
}

void EthosUDevice::write(uint32_t offset, uint32_t value) {
  if ((status_ & regs::status::kResetInProgress) != 0) return;
  if (offset == regs::kReset) {
    reset(value);
    return;
  }
  if (offset == regs::kCmd) {
    write_cmd(value);
    return;
  }
  write_register(offset, value);
}

void EthosUDevice::write_cmd(uint32_t value) {
  cmd_ = value;
  const uint32_t history = (value >> regs::cmd::kClearIrqHistoryShift) << regs::status::kIrqHistoryShift;
  status_ &= ~history;
  if ((value & regs::cmd::kClearIrq) != 0 &&
      (status_ & (regs::status::kIrqRaised | regs::status::kPmuIrqRaised)) != 0) {
    status_ &= ~(regs::status::kIrqRaised | regs::status::kPmuIrqRaised);
    lower_irq();
  }
  if ((value & regs::cmd::kStopRequest) != 0 && running()) {
    // Stops between commands: a long or hung stream ends where it is, its end not reached.
    pending_ = hung_ = false;
    status_ &= ~(regs::status::kRunning | regs::status::kCmdEndReached);
    raise_irq();
    return;
  }
  const uint32_t latched = regs::status::kBusError | regs::status::kCmdParseError |
                           regs::status::kWeightDecoderFault | regs::status::kBranchFault;
  if ((value & regs::cmd::kTransitionToRunning) != 0 && !running() && (status_ & latched) == 0) {
    start();
  }
}

uint32_t EthosUDevice::read_register(uint32_t offset) const {
  if (pmu_.owns(offset)) return pmu_.read(offset);
  if (offset >= regs::basep_lo(0) && offset < regs::basep_lo(regs::kNumBasePointers)) {
    const uint32_t n = (offset - regs::basep_lo(0)) / 8;
    return basep_[n][(offset - regs::basep_lo(0)) % 8 / 4];
  }
  if (offset >= arch_.memory_config0 && offset < arch_.memory_config0 + 4 * regs::kNumMemoryConfigs) {
    return memory_config_[(offset - arch_.memory_config0) / 4];
  }
  if (arch_.axi_sram != 0 && offset == arch_.axi_sram) return axi_sram_;
  if (arch_.axi_ext != 0 && offset == arch_.axi_ext) return axi_ext_;
  if (arch_.lock != 0 && offset == arch_.lock) return lock_;
  switch (offset) {
    case regs::kId: return identity_.id;
    case regs::kCmd: return cmd_;
    case regs::kQbase: return qbase_lo_;
    case regs::kQbaseHi: return qbase_hi_;
    case regs::kQread: return qread_;
    case regs::kQconfig: return qconfig_;
    case regs::kQsize: return qsize_;
    case regs::kProt: return prot_;
    case regs::kConfig: return identity_.config;
    case regs::kRegionCfg: return regioncfg_;
    default: return 0;  // RESET and unnamed offsets read as zero
  }
}

void EthosUDevice::write_register(uint32_t offset, uint32_t value) {
  if (pmu_.owns(offset)) {
    pmu_.write(offset, value);
    return;
  }
  const bool stopped = !running();
  if (offset >= regs::basep_lo(0) && offset < regs::basep_lo(regs::kNumBasePointers)) {
    const uint32_t n = (offset - regs::basep_lo(0)) / 8;
    const uint32_t half = (offset - regs::basep_lo(0)) % 8 / 4;
    if (stopped) basep_[n][half] = half == 0 ? value : value & high_word_mask(arch_);
    return;
  }
  if (offset >= arch_.memory_config0 && offset < arch_.memory_config0 + 4 * regs::kNumMemoryConfigs) {
    memory_config_[(offset - arch_.memory_config0) / 4] = value;
    return;
  }
  if (arch_.axi_sram != 0 && offset == arch_.axi_sram) axi_sram_ = value;
  if (arch_.axi_ext != 0 && offset == arch_.axi_ext) axi_ext_ = value;
  if (arch_.lock != 0 && offset == arch_.lock) lock_ = value;
  switch (offset) {
    case regs::kQbase:
    case regs::kQbaseHi:
    case regs::kQsize:
      if (!stopped) return;
      if (offset == regs::kQbase) qbase_lo_ = value;
      if (offset == regs::kQbaseHi) qbase_hi_ = value & high_word_mask(arch_);
      if (offset == regs::kQsize) qsize_ = value;
      status_ &= ~regs::status::kCmdEndReached;
      return;
    case regs::kQconfig: qconfig_ = value & 3u; return;
    case regs::kRegionCfg: regioncfg_ = value & 0xffffu; return;
    default: return;  // read-only registers and unnamed offsets ignore writes
  }
}

void EthosUDevice::raise_irq() {
  status_ |= regs::status::kIrqRaised;
  if (irq_ != nullptr) irq_(irq_context_, 1);
}

void EthosUDevice::lower_irq() {
  if (irq_ != nullptr) irq_(irq_context_, 0);
}

}  // namespace kiln::vnpu::device
