#include "backends/arm/runtime/npu_identity.h"

#include <cstdio>
#include <cstring>

#include "runtime/platform/log.h"

namespace kiln::ethos_u {
namespace {

uint32_t field(uint32_t value, uint32_t shift, uint32_t mask) {
  return shift == regs::kNoField ? 0 : (value >> shift) & mask;
}

/// The CONFIG bits the architecture's layout gives a meaning beyond product and MACs.
uint32_t memory_fields(const regs::ArchRegisters& arch, uint32_t config) {
  const regs::ConfigLayout& l = arch.config;
  return (field(config, l.shram_kib_shift, 0xff) << 0) | (field(config, l.sram_ports_log2_shift, 3) << 8) |
         (field(config, l.ext_ports_log2_shift, 1) << 10) | (field(config, l.cores_log2_shift, 3) << 12);
}

/// Appends printf-style text at `*used` (bounded by `size`).
template <typename... Args>
void append(char* out, size_t size, size_t* used, const char* format, Args... args) {
  if (*used >= size) return;
  const int n = std::snprintf(out + *used, size - *used, format, args...);
  if (n > 0) *used += static_cast<size_t>(n);
}

}  // namespace

Result<NpuIdentity> identify_npu(uint32_t id, uint32_t config) {
  const regs::ArchRegisters* arch = regs::arch_registers(regs::config::product(config));
  if (arch == nullptr) {
    KILN_LOG(Error, "ethos-u: CONFIG 0x%08x names product %u, which is no Ethos-U55/U65/U85", config,
             regs::config::product(config));
    return Error::NotSupported;
  }
  NpuIdentity npu;
  npu.id = id;
  npu.config = config;
  npu.arch = arch;
  npu.macs = 1u << regs::config::macs_log2(config);
  return npu;
}

void describe_config(uint32_t config, char* out, size_t size) {
  if (size == 0) return;
  out[0] = '\0';
  size_t used = 0;
  const regs::ArchRegisters* arch = regs::arch_registers(regs::config::product(config));
  if (arch == nullptr) {
    append(out, size, &used, "an unknown NPU (product %u)", regs::config::product(config));
  } else {
    append(out, size, &used, "%s with %u MACs/cycle", arch->name, 1u << regs::config::macs_log2(config));
    const regs::ConfigLayout& l = arch->config;
    if (l.shram_kib_shift != regs::kNoField) {
      append(out, size, &used, ", %u KiB SHRAM", field(config, l.shram_kib_shift, 0xff));
    }
    if (l.cores_log2_shift != regs::kNoField) {
      const uint32_t cores = 1u << field(config, l.cores_log2_shift, 3);
      append(out, size, &used, ", %u weight decoder%s, %u SRAM and %u external AXI port%s", cores,
             cores == 1 ? "" : "s", 1u << field(config, l.sram_ports_log2_shift, 3),
             1u << field(config, l.ext_ports_log2_shift, 1),
             field(config, l.ext_ports_log2_shift, 1) == 0 ? "" : "s");
    }
  }
  append(out, size, &used, ", command stream version %u (CONFIG 0x%08x)", regs::config::stream_version(config),
         config);
}

void describe_npu(const NpuIdentity& npu, char* out, size_t size) {
  if (size == 0) return;
  char config[160];
  describe_config(npu.config, config, sizeof(config));
  std::snprintf(out, size, "%s; r%up%u, architecture %u.%u.%u (ID 0x%08x)", config,
                regs::id::version_major(npu.id), regs::id::version_minor(npu.id), regs::id::arch_major(npu.id),
                regs::id::arch_minor(npu.id), regs::id::arch_patch(npu.id), npu.id);
}

Error check_stream_config(const NpuIdentity& npu, uint32_t config, uint32_t id) {
  const bool same_product = regs::config::product(config) == npu.arch->product;
  const bool same = same_product && regs::config::macs_log2(config) == regs::config::macs_log2(npu.config) &&
                    regs::config::stream_version(config) == regs::config::stream_version(npu.config) &&
                    memory_fields(*npu.arch, config) == memory_fields(*npu.arch, npu.config);
  if (!same) {
    char stream[160], hardware[160];
    describe_config(config, stream, sizeof(stream));
    describe_config(npu.config, hardware, sizeof(hardware));
    KILN_LOG(Error, "ethos-u: the command stream was compiled for %s; this NPU is %s", stream, hardware);
    return Error::NpuConfigMismatch;
  }
  if (regs::id::arch_major(id) != regs::id::arch_major(npu.id) ||
      regs::id::arch_minor(id) > regs::id::arch_minor(npu.id)) {
    KILN_LOG(Error, "ethos-u: the command stream was compiled for architecture %u.%u.%u; this NPU implements %u.%u.%u",
             regs::id::arch_major(id), regs::id::arch_minor(id), regs::id::arch_patch(id),
             regs::id::arch_major(npu.id), regs::id::arch_minor(npu.id), regs::id::arch_patch(npu.id));
    return Error::NpuConfigMismatch;
  }
  return Error::Ok;
}

Error check_target_name(const NpuIdentity& npu, const char* target) {
  // "ethos-u" + "55"/"65"/"85" + "-" + MACs.
  static constexpr struct {
    const char* prefix;
    uint32_t product;
  } kProducts[] = {{"ethos-u55-", 0}, {"ethos-u65-", 1}, {"ethos-u85-", 2}};
  uint32_t product = 0xff, macs = 0;
  for (const auto& p : kProducts) {
    if (target != nullptr && std::strncmp(target, p.prefix, 10) == 0) product = p.product;
  }
  if (product != 0xff) {
    for (const char* c = target + 10; *c != '\0' && macs <= 4096; ++c) {
      macs = (*c >= '0' && *c <= '9') ? macs * 10 + static_cast<uint32_t>(*c - '0') : 100000;
    }
  }
  if (product != npu.arch->product || macs != npu.macs) {
    char hardware[160];
    describe_config(npu.config, hardware, sizeof(hardware));
    KILN_LOG(Error, "ethos-u: the program was compiled for '%s'; this NPU is %s",
             target != nullptr ? target : "(none)", hardware);
    return Error::NpuConfigMismatch;
  }
  return Error::Ok;
}

}  // namespace kiln::ethos_u
