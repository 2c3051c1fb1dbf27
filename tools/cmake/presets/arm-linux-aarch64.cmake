# Preset "linux-aarch64": the host runtime, kernels, runner and C++ tests cross-compiled
# for 64-bit Arm Linux; ctest runs them through qemu-user (the toolchain file names the
# emulator in CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_BUILD_TYPE Release CACHE STRING "")
set(KILN_BUILD_TESTS ON CACHE BOOL "")
set(KILN_BUILD_HOST_RUNNER ON CACHE BOOL "")
set(KILN_BUILD_PYTHON OFF CACHE BOOL "")
# The XNNPACK delegate against Debian's arm64 XNNPACK, unpacked (not installed: its
# packages are not co-installable with the host's) by tools/fetch_xnnpack_arm64.sh.
set(XNNPACK_ROOT "${CMAKE_SOURCE_DIR}/build/deps/xnnpack-arm64/usr" CACHE PATH "")
if(NOT EXISTS "${XNNPACK_ROOT}/include/xnnpack.h")
  message(STATUS "linux-aarch64: no arm64 XNNPACK in ${XNNPACK_ROOT}: the XNNPACK delegate is left "
                 "out (tools/fetch_xnnpack_arm64.sh unpacks Debian's)")
endif()

# GoogleTest for the target: Debian ships only a host build of it, and its sources in
# /usr/src/googletest, which tests/cpp builds for aarch64.
set(KILN_GOOGLETEST_SOURCE_DIR "/usr/src/googletest" CACHE PATH "")
