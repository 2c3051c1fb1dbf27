// The delegates a firmware registers. A CPU-only firmware links none: the runner's
// weak register_firmware_backends() does nothing. kiln_add_firmware(... ETHOS_U) adds
// ethos_u_registration.cpp, whose strong definition registers the EthosUBackend on
// Kiln's virtual Ethos-U (QEMU's Corstone-300 has no NPU).
#pragma once

#include "runtime/core/error.h"

namespace kiln::firmware {

/// Registers the firmware's backends. Called once by the runner before loading the program.
Error register_firmware_backends();

}  // namespace kiln::firmware
