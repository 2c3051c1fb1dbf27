// The driver payload Vela writes around a command stream (its raw output's `cmd_data`, the
// `cmd_data` block of ExecuTorch's Ethos-U delegate payload): the "COP1" magic, then driver
// actions — the optimizer's configuration (the CONFIG and ID words the stream was compiled
// for), NOPs that align what follows, and the command stream (register commands the NPU
// reads from QBASE). The hardware never sees the payload; the driver reads it.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace kiln::ethos_u {

/// "COP1" as a little-endian word.
constexpr uint32_t kDriverPayloadMagic = 0x31504f43;

struct DriverPayload {
  /// True when the payload carries the optimizer's configuration.
  bool has_config = false;
  /// CONFIG and ID as the stream was compiled for (ethos_u_registers.h has the fields).
  uint32_t config = 0;
  uint32_t id = 0;
  /// The register commands.
  Span<const uint32_t> commands;
};

/// Reads a COP1 payload; words that do not start with the magic are taken as bare register
/// commands (no configuration to check; Kiln's hand-built test streams). Errors (logged):
/// NpuStreamTruncated for a payload that ends inside an action or holds no command stream,
/// NpuUnknownCommand for an action the driver does not know, NotSupported for a second
/// command stream (Vela writes one).
Result<DriverPayload> parse_driver_payload(Span<const uint32_t> words);

}  // namespace kiln::ethos_u
