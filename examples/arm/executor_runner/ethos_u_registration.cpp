// Registers the EthosUBackend with a virtual Ethos-U (the default Config is U55-128; a
// program's command stream names its own target). Linked into firmwares built with
// kiln_add_firmware(... ETHOS_U); its definition replaces the runner's weak one.
#include "examples/arm/executor_runner/backend_registration.h"
#include "examples/arm/executor_runner/memory_pools.h"

#include "backends/arm/runtime/ethos_u_backend.h"
#include "backends/arm/runtime/virtual_npu_driver.h"
#include "backends/arm/vnpu/virtual_npu.h"

namespace kiln::firmware {

Error register_firmware_backends() {
  // The virtual NPU's internal memory and weight-decode scratch: the pool the program's
  // memory manifest sized from its largest Ethos-U stream (the firmware build checked it
  // fits the board). Programs name their target in the command stream; this config is
  // the fallback.
  const Pool& work = firmware_pools().npu_work_memory;
  static ethos_u::VirtualNpuDriver driver({work.data, work.size}, vnpu::Config{});
  return ethos_u::register_ethos_u_backend(&driver);
}

}  // namespace kiln::firmware
