// The default NPU memory configuration (npu_memory_config.h).
#include "backends/arm/runtime/npu_memory_config.h"

namespace kiln::ethos_u {
namespace {

constexpr uint32_t kRegionCfg = (2u << 0) | (0u << 2) | (1u << 4);
constexpr uint32_t kQconfig = 2;
constexpr uint32_t kMemType = 3;  // normal, non-cacheable, bufferable
constexpr uint32_t kAxiLimit = (kMemType << regs::axi_limit::kMemTypeShift) |
                               (31u << regs::axi_limit::kMaxReadsM1Shift) | (15u << regs::axi_limit::kMaxWritesM1Shift);
constexpr uint32_t kSramAttr = kMemType << regs::mem_attr::kMemTypeShift;
constexpr uint32_t kExtAttr = kSramAttr | (1u << regs::mem_attr::kPortShift);
constexpr uint32_t kPortLimits = (31u << regs::mem_attr::kMaxReadsM1Shift) | (15u << regs::mem_attr::kMaxWritesM1Shift);

}  // namespace

void set_default_memory_config(uint32_t product, EthosUDriverConfig* config) {
  config->regioncfg = kRegionCfg;
  config->qconfig = kQconfig;
  if (product == regs::kEthosU85.product) {
    // MEM_ATTR 0-1 the SRAM port, 2-3 the external one; per-port limits.
    const uint32_t attrs[regs::kNumMemoryConfigs] = {kSramAttr, kSramAttr, kExtAttr, kExtAttr};
    for (uint32_t k = 0; k < regs::kNumMemoryConfigs; ++k) config->memory_config[k] = attrs[k];
    config->axi_sram = kPortLimits;
    config->axi_ext = kPortLimits;
  } else {
    // AXI_LIMIT0-3 (the port of each configuration is fixed on the Ethos-U55/U65).
    for (uint32_t k = 0; k < regs::kNumMemoryConfigs; ++k) config->memory_config[k] = kAxiLimit;
    config->axi_sram = 0;
    config->axi_ext = 0;
  }
}

}  // namespace kiln::ethos_u
