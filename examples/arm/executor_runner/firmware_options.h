// What kiln_add_firmware() sets per firmware beyond its memory pools: the ETDump it
// records (where semihosting writes it on the host, and the memory it records into) and
// the tolerance of a bundled program's test cases. firmware_options.cpp is compiled once
// per firmware with that firmware's values.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"

namespace kiln::firmware {

struct FirmwareOptions {
  /// Host path of the ETDump (empty: no ETDump is recorded).
  const char* etdump_path;
  /// Memory the ETDump records into (empty without ETDUMP).
  Span<uint8_t> etdump_buffer;
  /// A bundled test case passes when every |actual - expected| <= atol + rtol * |expected|.
  double bundle_rtol;
  double bundle_atol;
  /// A byte the planned buffers are filled with before the method loads, or -1 to leave
  /// them as they are (QEMU's RAM starts at zero; silicon's may hold anything).
  int fill_planned;
};

const FirmwareOptions& firmware_options();

}  // namespace kiln::firmware
