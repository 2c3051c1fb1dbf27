// Compiled per firmware (kiln_add_firmware) with KILN_FIRMWARE_ETDUMP_PATH,
// KILN_FIRMWARE_ETDUMP_BYTES, KILN_FIRMWARE_BUNDLE_RTOL, KILN_FIRMWARE_BUNDLE_ATOL and
// KILN_FIRMWARE_FILL_PLANNED.
#include "examples/arm/executor_runner/firmware_options.h"

#ifndef KILN_FIRMWARE_ETDUMP_PATH
#define KILN_FIRMWARE_ETDUMP_PATH ""
#endif
#ifndef KILN_FIRMWARE_ETDUMP_BYTES
#define KILN_FIRMWARE_ETDUMP_BYTES 0
#endif
#ifndef KILN_FIRMWARE_BUNDLE_RTOL
#define KILN_FIRMWARE_BUNDLE_RTOL 1e-5
#endif
#ifndef KILN_FIRMWARE_BUNDLE_ATOL
#define KILN_FIRMWARE_BUNDLE_ATOL 1e-8
#endif
#ifndef KILN_FIRMWARE_FILL_PLANNED
#define KILN_FIRMWARE_FILL_PLANNED -1
#endif

namespace kiln::firmware {
namespace {

// In DDR: the recording must not take the SRAM the program's tensors need.
alignas(16) __attribute__((section(".bss.kiln_ddr.etdump")))
uint8_t etdump_memory[KILN_FIRMWARE_ETDUMP_BYTES > 0 ? KILN_FIRMWARE_ETDUMP_BYTES : 16];

}  // namespace

const FirmwareOptions& firmware_options() {
  static const FirmwareOptions options = {
      KILN_FIRMWARE_ETDUMP_PATH,
      Span<uint8_t>(etdump_memory, KILN_FIRMWARE_ETDUMP_BYTES),
      KILN_FIRMWARE_BUNDLE_RTOL,
      KILN_FIRMWARE_BUNDLE_ATOL,
      KILN_FIRMWARE_FILL_PLANNED,
  };
  return options;
}

}  // namespace kiln::firmware
