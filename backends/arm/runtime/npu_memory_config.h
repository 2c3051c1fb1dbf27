// The NPU memory configuration Kiln's programs expect, for a board that has no reason to
// choose another: Vela's regions on the ports their memories sit behind — the weights
// and the command stream (region 0, QCONFIG) through memory configuration 2, the external
// port (flash or DDR on a board), the scratch arena (region 1) through 0 and the fast
// scratch (region 2) through 1, the SRAM port — as normal, non-cacheable, bufferable
// memory with 32 reads and 16 writes outstanding. The host's virtual NPU and the firmware
// both use it; a board with other needs fills EthosUDriverConfig itself.
#pragma once

#include <cstdint>

#include "backends/arm/registers/ethos_u_registers.h"
#include "backends/arm/runtime/ethos_u_driver_config.h"

namespace kiln::ethos_u {

/// Fills config's REGIONCFG, QCONFIG, the four memory configurations (AXI_LIMIT0-3 on an
/// Ethos-U55/U65, MEM_ATTR0-3 and the port limits on an Ethos-U85) for CONFIG.product
/// `product` (regs::ArchRegisters::product).
void set_default_memory_config(uint32_t product, EthosUDriverConfig* config);

}  // namespace kiln::ethos_u
