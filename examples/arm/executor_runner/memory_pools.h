// The runner's memory: pools sized from the program's memory manifest (the generated
// <model>_memory.h that kiln.memory.manifest writes next to the .pte) and placed in the
// SRAM or DDR sections the manifest chose. Nothing is sized "big enough".
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"

namespace kiln::firmware {

constexpr size_t kMaxPlannedBuffers = 4;

struct Pool {
  uint8_t* data;
  size_t size;
  /// "SRAM" or "DDR".
  const char* placement;
};

struct FirmwarePools {
  /// The method the manifest was written for.
  const char* method_name;
  /// Size of the .pte the manifest describes (checked against the embedded one).
  size_t program_bytes;
  Pool method_allocator;
  Pool planned[kMaxPlannedBuffers];
  size_t num_planned;
  Pool temp_allocator;
  /// Bytes of NPU scratch the Ethos-U delegates take from the method allocator
  /// (already inside method_allocator.size).
  size_t npu_scratch_bytes;
  /// The virtual NPU's work memory, as much as the program's largest Ethos-U stream needs
  /// ({nullptr, 0} for a program without one).
  Pool npu_work_memory;
};

const FirmwarePools& firmware_pools();

}  // namespace kiln::firmware
