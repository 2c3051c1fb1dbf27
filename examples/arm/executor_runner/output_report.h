// Printing a method's outputs on the UART, for people (the first values and a
// checksum) and for the host (every byte, in "KILN-HEX" lines that
// kiln.deploy.firmware_log parses back into arrays), and checking them bit for bit
// against the outputs embedded at build time.
#pragma once

#include <cstddef>

#include "examples/arm/executor_runner/embedded_files.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"

namespace kiln::firmware {

/// Prints output `index`: dtype, shape, the first values, FNV-1a checksum, hex dump.
void print_output(size_t index, const EValue& value);

/// Compares output `index` with an embedded .npy. Returns false (with a log line naming
/// the first differing element) if dtype, shape or any byte differ.
bool output_matches(size_t index, const EValue& value, const KilnEmbeddedFile& expected);

}  // namespace kiln::firmware
