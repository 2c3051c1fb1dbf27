// What a board tells the register-level Ethos-U driver: where the NPU is, how it may reach
// memory, and the hooks the driver needs from the system (caches, waiting for the
// interrupt). A board profile fills one (examples/arm/platform for firmware; the host's
// virtual NPU in host_virtual_npu.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"

namespace kiln::ethos_u {

/// A window of memory the NPU can address: `size` bytes the CPU sees at `cpu_address` and
/// the NPU at bus address `bus_address` (equal on most SoCs; some translate).
struct NpuMemoryWindow {
  uintptr_t cpu_address = 0;
  uint64_t bus_address = 0;
  size_t size = 0;
};

/// Cache maintenance over [data, data + bytes). On a CPU with a data cache: clean (write
/// back) before the NPU reads memory the CPU wrote, invalidate before the CPU reads what
/// the NPU wrote. Null on systems without a data cache (and on the host).
using CacheHook = void (*)(const void* data, size_t bytes);

/// Called while the driver waits for the NPU's interrupt, between checks of `irq_seen`,
/// the flag EthosUHardwareDriver::handle_irq() sets: on bare metal, sleep until an
/// interrupt without missing one that came since the check (mask interrupts, WFI unless
/// *irq_seen, unmask). Null: the driver polls STATUS instead.
using WaitHook = void (*)(void* context, const volatile bool* irq_seen);

struct EthosUDriverConfig {
  /// Where the NPU's registers are mapped (the MmioRegisterPort's base; logged).
  uintptr_t base_address = 0;
  /// The NPU's interrupt line, for the board's interrupt controller setup (logged; the
  /// board routes it to EthosUHardwareDriver::handle_irq()).
  int irq_number = -1;
  /// The security and privilege level the NPU runs at (RESET.pending_CSL/CPL, checked in
  /// PROT after every reset).
  bool secure = true;
  bool privileged = true;
  /// Memory configuration of each region (REGIONCFG: 2 bits per base pointer) and of the
  /// command stream (QCONFIG).
  uint32_t regioncfg = 0;
  uint32_t qconfig = 0;
  /// The four memory configurations: AXI_LIMIT0-3 on the Ethos-U55/U65, MEM_ATTR0-3 on the
  /// Ethos-U85 (ethos_u_registers.h has the fields); AXI_SRAM and AXI_EXT on the U85.
  uint32_t memory_config[4] = {};
  uint32_t axi_sram = 0, axi_ext = 0;
  /// The memory the NPU can address; the command stream and every region must lie inside
  /// one window (NpuRegionOutsideMemory otherwise).
  Span<const NpuMemoryWindow> npu_memory;
  /// Cache maintenance (see CacheHook).
  CacheHook clean_dcache = nullptr;
  CacheHook invalidate_dcache = nullptr;
  /// Waiting for the interrupt (see WaitHook).
  WaitHook wait_for_interrupt = nullptr;
  void* wait_context = nullptr;
  /// How long a command stream may run before the driver gives up (NpuTimeout), measured
  /// with the platform's tick counter.
  uint32_t timeout_us = 10u * 1000u * 1000u;
  /// A bound on the checks while waiting as well (0: none): for platforms whose tick
  /// counter does not advance, and hosts whose NPU completes at once.
  uint32_t max_wait_checks = 0;
  /// STATUS reads a soft reset may take before NpuResetFailed.
  uint32_t reset_polls = 100000;
};

}  // namespace kiln::ethos_u
