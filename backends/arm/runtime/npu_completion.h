// How a command stream ended, from the NPU's STATUS and QREAD after its interrupt: the
// named error each fault bit stands for.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"

namespace kiln::ethos_u {

/// Ok when the stream reached its end (STATUS.cmd_end_reached, QREAD at QSIZE) without a
/// fault; otherwise (logged with STATUS and QREAD) NpuBusError (bus abort, or an ECC fault
/// in the NPU's RAMs), NpuCommandStreamParseError (a command or register value the NPU
/// cannot use, an Ethos-U85 branch fault), NpuWeightStreamInvalid (the Ethos-U55/U65
/// weight decoder's fault), NpuEndOfStreamNotReached (stopped before NPU_OP_STOP).
Error completion_error(uint32_t status, uint32_t qread, uint32_t qsize);

}  // namespace kiln::ethos_u
