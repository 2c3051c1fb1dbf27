// The files kiln_add_firmware() embeds in the firmware (examples/arm/kiln_firmware.cmake
// generates an assembly file that .incbin's them into the read-only .kiln_program
// section): the .pte program, the input tensors and, optionally, the outputs the host
// runtime produced for the same inputs.
#pragma once

#include <cstdint>

extern "C" {

/// One embedded file: `size` bytes at `data`, 16-byte aligned.
struct KilnEmbeddedFile {
  const uint8_t* data;
  uint32_t size;
};

extern const KilnEmbeddedFile kiln_embedded_program;
/// .npy files, one per method input, in input order.
extern const KilnEmbeddedFile kiln_embedded_inputs[];
extern const uint32_t kiln_embedded_num_inputs;
/// .npy files with the expected outputs (none: outputs are printed, not checked).
extern const KilnEmbeddedFile kiln_embedded_expected_outputs[];
extern const uint32_t kiln_embedded_num_expected_outputs;
/// The firmware's name (the CMake target).
extern const char kiln_embedded_firmware_name[];

}  // extern "C"
