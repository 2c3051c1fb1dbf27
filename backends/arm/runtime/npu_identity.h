// What the NPU is, as its ID and CONFIG registers say, and the checks that a command
// stream was compiled for it: the configuration word in the stream's driver payload (and
// the program's target name) against CONFIG, the architecture version against ID.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/registers/ethos_u_registers.h"
#include "runtime/core/error.h"
#include "runtime/core/result.h"

namespace kiln::ethos_u {

struct NpuIdentity {
  /// The raw registers.
  uint32_t id = 0;
  uint32_t config = 0;
  /// The product's register layout (never null in an identity identify_npu returned).
  const regs::ArchRegisters* arch = nullptr;
  /// MACs per cycle of all cores.
  uint32_t macs = 0;
};

/// Decodes ID and CONFIG. NotSupported (logged) for a product Kiln does not know.
Result<NpuIdentity> identify_npu(uint32_t id, uint32_t config);

/// One line for logs and kiln-run: "Ethos-U55 r2p0, architecture 1.1.0, 128 MACs/cycle,
/// 24 KiB SHRAM, command stream version 0". Truncated to `size` (always terminated).
void describe_npu(const NpuIdentity& npu, char* out, size_t size);

/// What a CONFIG word describes, e.g. "Ethos-U85 with 256 MACs/cycle, 1 weight decoder,
/// command stream version 1 (CONFIG 0x20000118)".
void describe_config(uint32_t config, char* out, size_t size);

/// Checks the configuration a stream was compiled for (its driver payload's CONFIG and ID
/// words) against the NPU: product, MACs per cycle, SHRAM size (Ethos-U55/U65) or SRAM/
/// external AXI ports and weight decoders (Ethos-U85), command stream version, and the
/// architecture's major version (the NPU's minor version at least the stream's).
/// NpuConfigMismatch (logged, naming both) otherwise.
Error check_stream_config(const NpuIdentity& npu, uint32_t config, uint32_t id);

/// Checks a Vela target name ("ethos-u55-128") against the NPU's product and MACs.
/// NpuConfigMismatch (logged) when they differ or the name is not an Ethos-U target.
Error check_target_name(const NpuIdentity& npu, const char* target);

}  // namespace kiln::ethos_u
