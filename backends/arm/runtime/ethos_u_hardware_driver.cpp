// The register-level driver (the steps are listed in the header).
#include "backends/arm/runtime/ethos_u_hardware_driver.h"

#include <cstdio>

#include "backends/arm/runtime/npu_completion.h"
#include "backends/arm/runtime/npu_driver_payload.h"
#include "backends/arm/runtime/npu_memory_map.h"
#include "backends/arm/runtime/npu_pmu.h"
#include "runtime/platform/log.h"
#include "runtime/platform/platform.h"

namespace kiln::ethos_u {
namespace {

namespace status = regs::status;

/// STATUS faults that only a reset clears.
constexpr uint32_t kLatchedFaults = status::kBusError | status::kCmdParseError | status::kWeightDecoderFault |
                                    status::kEccFault | status::kBranchFault;

/// RESET's request (and PROT's expected value) for the configured levels.
uint32_t requested_levels(const EthosUDriverConfig& config) {
  return (config.privileged ? regs::prot::kPrivileged : 0u) | (config.secure ? 0u : regs::prot::kNonSecure);
}

}  // namespace

bool EthosUHardwareDriver::wait_for_reset() {
  uint32_t s = port_.read(regs::kStatus);
  for (uint32_t i = 0; (s & status::kResetInProgress) != 0 && i < config_.reset_polls; ++i) {
    s = port_.read(regs::kStatus);
  }
  return (s & status::kResetInProgress) == 0;
}

Error EthosUHardwareDriver::soft_reset() {
  const uint32_t levels = requested_levels(config_);
  // A reset in progress (the power-on one) ignores writes, RESET included: let it end.
  if (!wait_for_reset()) {
    KILN_LOG(Error, "ethos-u: the NPU stays in reset (%u STATUS reads)", config_.reset_polls);
    return Error::NpuResetFailed;
  }
  port_.write(regs::kReset, levels);
  if (!wait_for_reset()) {
    KILN_LOG(Error, "ethos-u: the soft reset did not complete within %u STATUS reads", config_.reset_polls);
    return Error::NpuResetFailed;
  }
  const uint32_t prot = port_.read(regs::kProt) & (regs::prot::kPrivileged | regs::prot::kNonSecure);
  if (prot != levels) {
    KILN_LOG(Error, "ethos-u: after reset PROT is 0x%x; the reset asked for 0x%x (privileged %d, secure %d)", prot,
             levels, config_.privileged ? 1 : 0, config_.secure ? 1 : 0);
    return Error::NpuResetFailed;
  }
  irq_seen_ = false;
  // The reset set the memory configuration back to its defaults.
  if (identity_.arch != nullptr) write_memory_config();
  return Error::Ok;
}

void EthosUHardwareDriver::write_memory_config() {
  const regs::ArchRegisters& arch = *identity_.arch;
  port_.write(regs::kRegionCfg, config_.regioncfg);
  port_.write(regs::kQconfig, config_.qconfig);
  for (uint32_t k = 0; k < regs::kNumMemoryConfigs; ++k) {
    port_.write(arch.memory_config0 + 4 * k, config_.memory_config[k]);
  }
  if (arch.axi_sram != 0) port_.write(arch.axi_sram, config_.axi_sram);
  if (arch.axi_ext != 0) port_.write(arch.axi_ext, config_.axi_ext);
}

uint32_t EthosUHardwareDriver::clock_power() const {
  return port_.read(regs::kCmd) & regs::cmd::kClockPowerMask;
}

Error EthosUHardwareDriver::init() {
  initialized_ = false;
  identity_ = NpuIdentity();
  KILN_TRY(soft_reset());
  KILN_TRY_ASSIGN(identity_, identify_npu(port_.read(regs::kId), port_.read(regs::kConfig)));
  write_memory_config();
  char line[256];
  describe_npu(identity_, line, sizeof(line));
  KILN_LOG(Info, "ethos-u: %s; registers at 0x%lx, interrupt %d", line,
           static_cast<unsigned long>(config_.base_address), config_.irq_number);
  initialized_ = true;
  return Error::Ok;
}

void EthosUHardwareDriver::handle_irq() {
  const uint32_t s = port_.read(regs::kStatus);
  if ((s & (status::kIrqRaised | status::kPmuIrqRaised)) == 0) return;
  port_.write(regs::kCmd, clock_power() | regs::cmd::kClearIrq);
  irq_seen_ = true;
}

Error EthosUHardwareDriver::check_stream(const NpuInvocation& invocation, Span<const uint32_t>* commands) {
  KILN_TRY_ASSIGN(const DriverPayload payload, parse_driver_payload(invocation.command_stream));
  if (payload.has_config) KILN_TRY(check_stream_config(identity_, payload.config, payload.id));
  if (invocation.target != nullptr) KILN_TRY(check_target_name(identity_, invocation.target));
  if (invocation.regions.size() > regs::kNumBasePointers || payload.commands.size() > UINT32_MAX / 4) {
    KILN_LOG(Error, "ethos-u: %zu regions and %zu command words given; the NPU has %u base pointers and a "
             "32-bit QSIZE", invocation.regions.size(), payload.commands.size(), regs::kNumBasePointers);
    return Error::InvalidArgument;
  }
  *commands = payload.commands;
  return Error::Ok;
}

Error EthosUHardwareDriver::program_addresses(const NpuInvocation& invocation, Span<const uint32_t> commands) {
  const uint32_t bits = identity_.arch->address_bits;
  const size_t stream_bytes = commands.size() * 4;
  KILN_TRY_ASSIGN(const uint64_t qbase,
                  npu_bus_address(config_.npu_memory, commands.data(), stream_bytes, bits, "the command stream"));
  if (qbase % regs::kBaseAlignment != 0) {
    KILN_LOG(Error, "ethos-u: the command stream starts at bus address 0x%llx; QBASE must be %u-byte aligned",
             static_cast<unsigned long long>(qbase), regs::kBaseAlignment);
    return Error::NpuMisalignedBase;
  }
  uint64_t bases[regs::kNumBasePointers] = {};
  for (size_t i = 0; i < invocation.regions.size(); ++i) {
    const NpuRegion& region = invocation.regions[i];
    if (region.size == 0) continue;  // unused: base pointer 0
    char what[32];
    std::snprintf(what, sizeof(what), "region %zu", i);
    KILN_TRY_ASSIGN(bases[i], npu_bus_address(config_.npu_memory, region.data, region.size, bits, what));
    if (bases[i] % regs::kBaseAlignment != 0) {
      KILN_LOG(Error, "ethos-u: region %zu starts at bus address 0x%llx; base pointers must be %u-byte aligned",
               i, static_cast<unsigned long long>(bases[i]), regs::kBaseAlignment);
      return Error::NpuMisalignedBase;
    }
  }
  port_.write(regs::kQbase, static_cast<uint32_t>(qbase));
  port_.write(regs::kQbaseHi, static_cast<uint32_t>(qbase >> 32));
  port_.write(regs::kQsize, static_cast<uint32_t>(stream_bytes));
  for (uint32_t n = 0; n < regs::kNumBasePointers; ++n) {
    port_.write(regs::basep_lo(n), static_cast<uint32_t>(bases[n]));
    port_.write(regs::basep_hi(n), static_cast<uint32_t>(bases[n] >> 32));
  }
  return Error::Ok;
}

void EthosUHardwareDriver::clean(const NpuInvocation& invocation, Span<const uint32_t> commands) const {
  if (config_.clean_dcache == nullptr) return;
  config_.clean_dcache(commands.data(), commands.size() * 4);
  for (const NpuRegion& region : invocation.regions) {
    if (region.size != 0) config_.clean_dcache(region.data, region.size);
  }
}

void EthosUHardwareDriver::invalidate(const NpuInvocation& invocation) const {
  if (config_.invalidate_dcache == nullptr) return;
  for (const NpuRegion& region : invocation.regions) {
    if (region.size != 0 && !region.read_only) config_.invalidate_dcache(region.data, region.size);
  }
}

Error EthosUHardwareDriver::wait_for_completion() {
  const uint64_t start = kiln_pal_current_ticks();
  const uint64_t limit_ns = uint64_t{config_.timeout_us} * 1000u;
  for (uint32_t checks = 1;; ++checks) {
    if (irq_seen_) {
      // A PMU overflow interrupt can come while the stream still runs: wait on.
      if ((port_.read(regs::kStatus) & status::kRunning) == 0) return Error::Ok;
      irq_seen_ = false;
    }
    if (config_.wait_for_interrupt != nullptr) {
      config_.wait_for_interrupt(config_.wait_context, &irq_seen_);
    } else if ((port_.read(regs::kStatus) & (status::kIrqRaised | status::kRunning)) == status::kIrqRaised) {
      return Error::Ok;
    }
    if (ticks_to_ns(kiln_pal_current_ticks() - start) >= limit_ns ||
        (config_.max_wait_checks != 0 && checks >= config_.max_wait_checks)) {
      KILN_LOG(Error, "ethos-u: no completion interrupt within %u us (%u checks; STATUS 0x%08x, QREAD %u)",
               config_.timeout_us, checks, port_.read(regs::kStatus), port_.read(regs::kQread));
      return Error::NpuTimeout;
    }
  }
}

Error EthosUHardwareDriver::invoke(const NpuInvocation& invocation, NpuCounters* counters) {
  if (counters != nullptr) *counters = NpuCounters();
  if (!initialized_) {
    KILN_LOG(Error, "ethos-u: invoke before a successful init()");
    return Error::InvalidState;
  }
  Span<const uint32_t> commands;
  KILN_TRY(check_stream(invocation, &commands));
  const uint32_t before = port_.read(regs::kStatus);
  if ((before & (status::kRunning | status::kResetInProgress)) != 0) {
    KILN_LOG(Error, "ethos-u: the NPU is busy (STATUS 0x%08x): another command stream is running", before);
    return Error::NpuBusy;
  }
  if ((before & kLatchedFaults) != 0) {
    // A fault another stream left behind stops the NPU from starting; only a reset clears it.
    KILN_LOG(Info, "ethos-u: resetting the NPU: STATUS 0x%08x shows an earlier fault", before);
    KILN_TRY(soft_reset());
  }
  KILN_TRY(program_addresses(invocation, commands));
  write_memory_config();
  clean(invocation, commands);
  start_pmu(port_, *identity_.arch);
  irq_seen_ = false;
  port_.write(regs::kCmd, clock_power() | regs::cmd::kTransitionToRunning);

  Error error = wait_for_completion();
  if (error == Error::Ok) {
    const uint32_t s = port_.read(regs::kStatus);
    const uint32_t qread = port_.read(regs::kQread);
    if ((s & status::kIrqRaised) != 0) port_.write(regs::kCmd, clock_power() | regs::cmd::kClearIrq);
    error = completion_error(s, qread, static_cast<uint32_t>(commands.size() * 4));
  }
  if (counters != nullptr) read_pmu(port_, *identity_.arch, counters);
  if (error != Error::Ok) {
    // Faults are cleared by reset only; a hung NPU stops with it.
    const Error reset = soft_reset();
    if (reset != Error::Ok) initialized_ = false;
    return error;
  }
  invalidate(invocation);
  return Error::Ok;
}

}  // namespace kiln::ethos_u
