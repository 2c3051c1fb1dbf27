// The delegates a firmware registers. A CPU-only firmware links none: the runner's
// weak register_firmware_backends() does nothing. kiln_add_firmware(... ETHOS_U) adds
// ethos_u_registration.cpp, whose strong definitions register the EthosUBackend on the
// board's Ethos-U through the register-level driver and report its PMU counters.
#pragma once

#include "runtime/core/error.h"
#include "runtime/executor/method.h"

namespace kiln::firmware {

/// Registers the firmware's backends. Called once by the runner before loading the program.
Error register_firmware_backends();

/// Prints what the firmware's NPU did in `method`'s last execute (its PMU counters next to
/// Vela's estimate). Called by the runner after each inference; nothing without an NPU.
void report_npu_counters(const Method& method);

}  // namespace kiln::firmware
