// Registers the EthosUBackend on the board's Ethos-U, driven through its registers by the
// register-level driver (EthosUHardwareDriver over volatile MMIO at KILN_BOARD_NPU_BASE) —
// the code that runs on silicon. Where the board file says the NPU is a device model
// (QEMU's Corstone-300 has none), board_npu_start() has put Kiln's virtual NPU behind that
// address first (examples/arm/platform/npu_device_model.cpp); nothing here changes.
// Linked into firmwares built with kiln_add_firmware(... ETHOS_U); its definitions
// replace the runner's weak ones.
#include <cstdint>
#include <cstring>

#include "backends/arm/runtime/ethos_u_backend.h"
#include "backends/arm/runtime/ethos_u_hardware_driver.h"
#include "backends/arm/runtime/npu_identity.h"
#include "backends/arm/runtime/npu_memory_config.h"
#include "backends/arm/runtime/npu_register_port.h"
#include "examples/arm/executor_runner/backend_registration.h"
#include "examples/arm/platform/board.h"
#include "examples/arm/platform/board_npu.h"

extern "C" const char* const kiln_embedded_npu_target;
extern "C" const uint64_t kiln_embedded_vela_npu_cycles;

namespace kiln::firmware {
namespace {

/// The board's memory the NPU can address, at the same address for the CPU and the NPU.
constexpr ethos_u::NpuMemoryWindow kNpuMemory[] = {
#define KILN_REGION(i) \
  {KILN_BOARD_NPU_VISIBLE_REGION_##i##_BASE, KILN_BOARD_NPU_VISIBLE_REGION_##i##_BASE, \
   KILN_BOARD_NPU_VISIBLE_REGION_##i##_BYTES}
    KILN_REGION(0),
#if KILN_BOARD_NPU_VISIBLE_REGION_COUNT > 1
    KILN_REGION(1),
#endif
#if KILN_BOARD_NPU_VISIBLE_REGION_COUNT > 2
    KILN_REGION(2),
#endif
#if KILN_BOARD_NPU_VISIBLE_REGION_COUNT > 3
#error "ethos_u_registration.cpp maps at most 3 NPU-visible regions: add a line"
#endif
#undef KILN_REGION
};

/// The driver's configuration from the board file's facts (board_profile.cmake).
ethos_u::EthosUDriverConfig board_driver_config() {
  ethos_u::EthosUDriverConfig config;
  config.base_address = KILN_BOARD_NPU_BASE;
  config.irq_number = KILN_BOARD_NPU_IRQ;
  config.secure = KILN_BOARD_NPU_SECURE_ENABLE != 0;
  config.privileged = KILN_BOARD_NPU_PRIVILEGE_ENABLE != 0;
  // The memory configuration differs between the U55/U65 and the U85: the firmware is
  // built for one NPU (its program's).
  const bool u85 = std::strncmp(kiln_embedded_npu_target, "ethos-u85", 9) == 0;
  ethos_u::set_default_memory_config(u85 ? ethos_u::regs::kEthosU85.product : ethos_u::regs::kEthosU55.product,
                                     &config);
  config.npu_memory = {kNpuMemory, sizeof(kNpuMemory) / sizeof(kNpuMemory[0])};
#if KILN_BOARD_DCACHE_PRESENT
  config.clean_dcache = &board_dcache_clean;
  config.invalidate_dcache = &board_dcache_invalidate;
#endif
  config.wait_for_interrupt = &board_npu_wait_for_interrupt;
  return config;
}

ethos_u::MmioRegisterPort& npu_port() {
  static ethos_u::MmioRegisterPort port(KILN_BOARD_NPU_BASE);
  return port;
}

ethos_u::EthosUHardwareDriver& npu_driver() {
  static ethos_u::EthosUHardwareDriver driver(npu_port(), board_driver_config());
  return driver;
}

void on_npu_irq(void* driver) { static_cast<ethos_u::EthosUHardwareDriver*>(driver)->handle_irq(); }

}  // namespace

Error register_firmware_backends() {
  if (board_npu_start() != 0) return Error::NpuResetFailed;
  ethos_u::EthosUHardwareDriver& driver = npu_driver();
  board_npu_set_irq_handler(&on_npu_irq, &driver);
  // init() resets the NPU and reads its identity from ID and CONFIG.
  KILN_TRY(driver.init());
  char line[256];
  ethos_u::describe_npu(driver.identity(), line, sizeof(line));
  board_printf("I [npu] %s (read from its ID/CONFIG registers at 0x%08lx)\n", line,
               static_cast<unsigned long>(KILN_BOARD_NPU_BASE));
  return ethos_u::register_ethos_u_backend(&driver);
}

void report_npu_counters(const Method& method) {
  size_t delegates_run = 0;
  Result<ethos_u::NpuCounters> counters = ethos_u::method_npu_counters(method, &delegates_run);
  if (!counters.ok() || delegates_run == 0) return;
  const ethos_u::NpuCounters& c = *counters;
  board_printf("I [npu] PMU: %llu cycles, %llu active cycles, %llu AXI read beats, %llu AXI write beats "
               "(%zu delegate call(s)); Vela's estimate: %llu cycles (its layers' total, memory stalls included)\n",
               static_cast<unsigned long long>(c.cycles), static_cast<unsigned long long>(c.active_cycles),
               static_cast<unsigned long long>(c.axi_read_beats),
               static_cast<unsigned long long>(c.axi_write_beats), delegates_run,
               static_cast<unsigned long long>(kiln_embedded_vela_npu_cycles));
}

}  // namespace kiln::firmware
