// Registers the EthosUBackend with a virtual Ethos-U (the default Config is U55-128; a
// program's command stream names its own target). Linked into firmwares built with
// kiln_add_firmware(... ETHOS_U); its definition replaces the runner's weak one.
#include "examples/arm/executor_runner/backend_registration.h"

#include <cstdint>

#include "backends/arm/runtime/ethos_u_backend.h"
#include "backends/arm/runtime/virtual_npu_driver.h"
#include "backends/arm/vnpu/virtual_npu.h"

namespace kiln::firmware {
namespace {

// The virtual NPU's internal memory and weight-decode scratch: megabytes, so in DDR
// (the DTCM that holds .bss has 512 KiB).
alignas(16) __attribute__((section(".bss.kiln_ddr.vnpu_work")))
uint8_t g_vnpu_work[vnpu::kRecommendedWorkMemoryBytes];

}  // namespace

Error register_firmware_backends() {
  // Programs name their target in the command stream; this config is the fallback.
  static ethos_u::VirtualNpuDriver driver({g_vnpu_work, sizeof(g_vnpu_work)}, vnpu::Config{});
  return ethos_u::register_ethos_u_backend(&driver);
}

}  // namespace kiln::firmware
