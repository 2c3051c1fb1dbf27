#include "backends/arm/vnpu/device/device_identity.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu::device {
namespace {

namespace regs = ethos_u::regs;

static_assert(static_cast<uint32_t>(Arch::EthosU55) == regs::kEthosU55.product &&
                  static_cast<uint32_t>(Arch::EthosU65) == regs::kEthosU65.product &&
                  static_cast<uint32_t>(Arch::EthosU85) == regs::kEthosU85.product,
              "vnpu::Arch values are the CONFIG product numbers");

/// What CONFIG says about a configuration's memory besides its MACs: SHRAM KiB of all
/// cores (Ethos-U55/U65), log2 of the SRAM and external AXI ports (Ethos-U85). The values
/// Vela 5.2 writes into its COP1 config word for each of its targets.
struct MemoryFacts {
  Arch arch;
  int macs;
  uint32_t shram_kib, sram_ports_log2, ext_ports_log2;
};
constexpr MemoryFacts kMemoryFacts[] = {
    {Arch::EthosU55, 32, 16, 0, 0},    {Arch::EthosU55, 64, 16, 0, 0},
    {Arch::EthosU55, 128, 24, 0, 0},   {Arch::EthosU55, 256, 48, 0, 0},
    {Arch::EthosU65, 256, 48, 0, 0},   {Arch::EthosU65, 512, 96, 0, 0},
    {Arch::EthosU85, 128, 0, 1, 0},    {Arch::EthosU85, 256, 0, 1, 0},
    {Arch::EthosU85, 512, 0, 1, 0},    {Arch::EthosU85, 1024, 0, 1, 1},
    {Arch::EthosU85, 2048, 0, 2, 1},
};

uint32_t log2_of(uint32_t v) {
  uint32_t n = 0;
  while ((v >> (n + 1)) != 0) ++n;
  return n;
}

/// `value` at `shift`, or nothing where the architecture has no such field.
uint32_t field(uint32_t value, uint32_t shift) { return shift == regs::kNoField ? 0 : value << shift; }

}  // namespace

Error identity_from_target(const char* target, uint32_t id, DeviceIdentity* out) {
  Config npu;
  if (!config_from_target_name(target, &npu)) {
    KILN_LOG(Error, "NPU device: '%s' is not an Ethos-U configuration Vela compiles for",
             target != nullptr ? target : "(null)");
    return Error::NpuConfigMismatch;
  }
  const regs::ArchRegisters* arch = regs::arch_registers(static_cast<uint32_t>(npu.arch));
  const MemoryFacts* facts = nullptr;
  for (const MemoryFacts& f : kMemoryFacts) {
    if (f.arch == npu.arch && f.macs == npu.macs) facts = &f;
  }
  if (arch == nullptr || facts == nullptr) return Error::Internal;  // the tables cover every target
  out->arch = arch;
  out->npu = npu;
  out->id = id != 0 ? id : arch->id;
  const regs::ConfigLayout& layout = arch->config;
  out->config = (log2_of(static_cast<uint32_t>(npu.macs)) << regs::config::kMacsShift) |
                (arch->stream_version << regs::config::kStreamVersionShift) |
                (arch->product << regs::config::kProductShift) |
                field(facts->shram_kib, layout.shram_kib_shift) |
                field(facts->sram_ports_log2, layout.sram_ports_log2_shift) |
                field(facts->ext_ports_log2, layout.ext_ports_log2_shift) |
                field(log2_of(static_cast<uint32_t>(npu.cores)), layout.cores_log2_shift);
  return Error::Ok;
}

}  // namespace kiln::vnpu::device
