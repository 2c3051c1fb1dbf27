// The register-level driver's skeleton (see the header for what each step must do).
#include "backends/arm/runtime/ethos_u_hardware_driver.h"

#include "runtime/platform/log.h"

namespace kiln::ethos_u {

Error EthosUHardwareDriver::init() {
  KILN_LOG(Error, "ethos-u hardware driver: init (registers at 0x%lx) is not implemented: this "
           "build has no register-level Ethos-U driver; register the virtual NPU instead",
           static_cast<unsigned long>(base_address_));
  return Error::NotImplemented;
}

bool EthosUHardwareDriver::is_available() const {
  if (!initialized_) {
    KILN_LOG(Error, "ethos-u hardware driver: the NPU is not available (not initialized; the "
             "driver is a skeleton)");
  }
  return initialized_;
}

Error EthosUHardwareDriver::invoke(const NpuInvocation& invocation, NpuCounters* counters) {
  if (counters != nullptr) *counters = NpuCounters();
  KILN_LOG(Error, "ethos-u hardware driver: invoke (%zu command words, target '%s') is not "
           "implemented", invocation.command_stream.size(),
           invocation.target != nullptr ? invocation.target : "unnamed");
  return Error::NotImplemented;
}

}  // namespace kiln::ethos_u
