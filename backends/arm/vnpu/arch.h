// The thin per-architecture layer: what the interpreter and the shared operations need to
// know about one Ethos-U product, as a table of data and functions. Everything else (the
// command loop, the operations, the output stage, feature-map addressing) is shared.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/op_desc.h"
#include "backends/arm/vnpu/register_file.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"

namespace kiln::vnpu {

/// What the decoder of one operation gets.
struct DecodeInput {
  const RegisterFile& regs;
  /// The command code that starts the operation and its parameter.
  uint32_t code;
  uint16_t param;
  const Config& config;
  /// Bytes of the NPU's internal memory for this run (SHRAM or LUT memory).
  uint32_t internal_bytes;
};

/// The COP1 config word, decoded.
struct StreamConfig {
  /// Internal memory the stream may use (SHRAM of an Ethos-U55/U65, LUT memory of a U85).
  uint32_t internal_bytes = 0;
};

struct ArchLayer {
  /// "Ethos-U85" (logs).
  const char* name;
  /// Product id in the COP1 config word (bits 28-31).
  uint32_t product;
  /// Names of known command codes, nullptr for codes this architecture does not have.
  const char* (*cmd0_name)(uint32_t code);
  const char* (*cmd1_name)(uint32_t code);
  /// Checks the COP1 config word (MACs, cores) against `config`; NpuConfigMismatch with a
  /// log line naming both if they differ.
  Error (*read_config_word)(uint32_t word, const Config& config, StreamConfig* out);
  /// The internal memory of `config` when the stream has no config word.
  uint32_t (*default_internal_bytes)(const Config& config);
  /// Decodes the registers into the operation the command `in.code` starts.
  Error (*decode)(const DecodeInput& in, OpDesc* op);
};

/// The layer of `arch` (every Arch value has one).
const ArchLayer& arch_layer(Arch arch);

namespace u55 {
/// Ethos-U55 and Ethos-U65 share registers and operations; they differ in product id.
extern const ArchLayer kU55Layer;
extern const ArchLayer kU65Layer;
}  // namespace u55
namespace u85 {
extern const ArchLayer kLayer;
}  // namespace u85

}  // namespace kiln::vnpu
