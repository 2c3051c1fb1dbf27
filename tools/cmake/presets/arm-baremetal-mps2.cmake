# Presets "arm-baremetal-m4" (QEMU mps2-an386, Cortex-M4) and "arm-baremetal-m33" (QEMU
# mps2-an505, Cortex-M33): the runtime, the kernels (the Cortex-M ones in their DSP
# flavour) and the firmware that runs every cortex_m:: kernel case in QEMU. The board
# comes from KILN_BOARD, the core from TARGET_CPU (CMakePresets.json).
set(KILN_PAL "minimal" CACHE STRING "")
set(KILN_BUILD_HOST_RUNNER OFF CACHE BOOL "")
set(KILN_BUILD_TESTS OFF CACHE BOOL "")
set(KILN_BUILD_PYTHON OFF CACHE BOOL "")
set(KILN_BUILD_FIRMWARE ON CACHE BOOL "")
set(KILN_BUILD_FIRMWARE_TESTS ON CACHE BOOL "")
# Only the kernel case firmware: these boards run no Ethos-U programs.
set(KILN_FIRMWARE_TESTS_KERNELS_ONLY ON CACHE BOOL "")
set(KILN_BUILD_ETHOS_U OFF CACHE BOOL "")
set(KILN_LOG_LEVEL "Info" CACHE STRING "")
set(CMAKE_POSITION_INDEPENDENT_CODE OFF)
enable_language(ASM)
