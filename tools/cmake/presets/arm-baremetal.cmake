# Preset "arm-baremetal" (and "arm-baremetal-m85"): the runtime, the portable kernels and
# the runner firmware for the Corstone-300 (QEMU mps3-an547), with the firmware tests
# that run in QEMU. The core comes from TARGET_CPU (tools/cmake/arm-none-eabi-gcc.cmake).
set(KILN_PAL "minimal" CACHE STRING "")
set(KILN_BUILD_HOST_RUNNER OFF CACHE BOOL "")
set(KILN_BUILD_TESTS OFF CACHE BOOL "")
set(KILN_BUILD_PYTHON OFF CACHE BOOL "")
set(KILN_BUILD_FIRMWARE ON CACHE BOOL "")
set(KILN_BUILD_FIRMWARE_TESTS ON CACHE BOOL "")
# The Ethos-U delegate, driven by Kiln's virtual NPU (QEMU has no Ethos-U).
set(KILN_BUILD_ETHOS_U ON CACHE BOOL "")
# Firmware messages: errors and progress, not debug chatter (every string costs flash).
set(KILN_LOG_LEVEL "Info" CACHE STRING "")
# Position-independent code would route every global through a GOT on Cortex-M.
set(CMAKE_POSITION_INDEPENDENT_CODE OFF)
# The firmware embeds its program with the assembler (.incbin); enabled here, at the top
# level, so that every directory that adds a firmware (examples/arm, tests/firmware) has it.
enable_language(ASM)
