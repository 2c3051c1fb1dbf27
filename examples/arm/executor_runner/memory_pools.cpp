// Compiled once per firmware: includes that firmware's generated memory header
// (KILN_MEMORY_HEADER, set by kiln_add_firmware). Whether the pools fit the board is
// checked before this is compiled (platform/check_memory_fit.cmake, against the board file).
#include "examples/arm/executor_runner/memory_pools.h"

#include KILN_MEMORY_HEADER

#define KILN_STRINGIFY_(x) #x
#define KILN_STRINGIFY(x) KILN_STRINGIFY_(x)

static_assert(KILN_MANIFEST_NUM_PLANNED_BUFFERS <= 4,
              "Kiln: the runner supports at most 4 planned buffers (memory ids); the program has "
              KILN_STRINGIFY(KILN_MANIFEST_NUM_PLANNED_BUFFERS));

// Older memory headers do not name the NPU.
#ifndef KILN_MANIFEST_NPU_TARGET
#define KILN_MANIFEST_NPU_TARGET ""
#endif
#ifndef KILN_MANIFEST_VELA_NPU_CYCLES
#define KILN_MANIFEST_VELA_NPU_CYCLES 0ull
#endif

// The Ethos-U this firmware is built for (a device model is made as this one): the
// firmware's NPU_TARGET, else the program's, else the board's default (kiln_firmware.cmake).
#if defined(KILN_FIRMWARE_NPU_TARGET)
extern "C" const char* const kiln_embedded_npu_target = KILN_FIRMWARE_NPU_TARGET;
#elif defined(KILN_FIRMWARE_DEFAULT_NPU_TARGET)
extern "C" const char* const kiln_embedded_npu_target =
    sizeof(KILN_MANIFEST_NPU_TARGET) > 1 ? KILN_MANIFEST_NPU_TARGET : KILN_FIRMWARE_DEFAULT_NPU_TARGET;
#else
extern "C" const char* const kiln_embedded_npu_target = KILN_MANIFEST_NPU_TARGET;
#endif
/// Vela's cycle estimate of one run of the program's NPU work (0: unknown).
extern "C" const uint64_t kiln_embedded_vela_npu_cycles = KILN_MANIFEST_VELA_NPU_CYCLES;

namespace kiln::firmware {
namespace {

// Zero-sized pools still get 16 bytes: a zero-length array is not C++.
#define KILN_POOL(name, bytes, section_name) \
  alignas(16) __attribute__((section(section_name))) uint8_t name[(bytes) > 0 ? (bytes) : 16]

KILN_POOL(g_method_pool, KILN_MANIFEST_METHOD_ALLOCATOR_BYTES, KILN_MANIFEST_METHOD_ALLOCATOR_SECTION);
KILN_POOL(g_temp_pool, KILN_MANIFEST_TEMP_ALLOCATOR_BYTES, KILN_MANIFEST_TEMP_ALLOCATOR_SECTION);
#if KILN_MANIFEST_NUM_PLANNED_BUFFERS > 0
KILN_POOL(g_planned_0, KILN_MANIFEST_PLANNED_BUFFER_0_BYTES, KILN_MANIFEST_PLANNED_BUFFER_0_SECTION);
#endif
#if KILN_MANIFEST_NUM_PLANNED_BUFFERS > 1
KILN_POOL(g_planned_1, KILN_MANIFEST_PLANNED_BUFFER_1_BYTES, KILN_MANIFEST_PLANNED_BUFFER_1_SECTION);
#endif
#if KILN_MANIFEST_NUM_PLANNED_BUFFERS > 2
KILN_POOL(g_planned_2, KILN_MANIFEST_PLANNED_BUFFER_2_BYTES, KILN_MANIFEST_PLANNED_BUFFER_2_SECTION);
#endif
#if KILN_MANIFEST_NUM_PLANNED_BUFFERS > 3
KILN_POOL(g_planned_3, KILN_MANIFEST_PLANNED_BUFFER_3_BYTES, KILN_MANIFEST_PLANNED_BUFFER_3_SECTION);
#endif

const char* placement_of(const char* section) {
  // Section names are ".bss.kiln_sram.*" or ".bss.kiln_ddr.*".
  return section[10] == 's' ? "SRAM" : "DDR";
}

}  // namespace

const FirmwarePools& firmware_pools() {
  static const FirmwarePools pools = {
      KILN_MANIFEST_METHOD,
      KILN_MANIFEST_PROGRAM_BYTES,
      {g_method_pool, KILN_MANIFEST_METHOD_ALLOCATOR_BYTES, placement_of(KILN_MANIFEST_METHOD_ALLOCATOR_SECTION)},
      {
#if KILN_MANIFEST_NUM_PLANNED_BUFFERS > 0
          {g_planned_0, KILN_MANIFEST_PLANNED_BUFFER_0_BYTES, placement_of(KILN_MANIFEST_PLANNED_BUFFER_0_SECTION)},
#endif
#if KILN_MANIFEST_NUM_PLANNED_BUFFERS > 1
          {g_planned_1, KILN_MANIFEST_PLANNED_BUFFER_1_BYTES, placement_of(KILN_MANIFEST_PLANNED_BUFFER_1_SECTION)},
#endif
#if KILN_MANIFEST_NUM_PLANNED_BUFFERS > 2
          {g_planned_2, KILN_MANIFEST_PLANNED_BUFFER_2_BYTES, placement_of(KILN_MANIFEST_PLANNED_BUFFER_2_SECTION)},
#endif
#if KILN_MANIFEST_NUM_PLANNED_BUFFERS > 3
          {g_planned_3, KILN_MANIFEST_PLANNED_BUFFER_3_BYTES, placement_of(KILN_MANIFEST_PLANNED_BUFFER_3_SECTION)},
#endif
      },
      KILN_MANIFEST_NUM_PLANNED_BUFFERS,
      {g_temp_pool, KILN_MANIFEST_TEMP_ALLOCATOR_BYTES, placement_of(KILN_MANIFEST_TEMP_ALLOCATOR_SECTION)},
      KILN_MANIFEST_NPU_SCRATCH_BYTES,
  };
  return pools;
}

}  // namespace kiln::firmware
