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
# /usr/src/googletest. Build those for aarch64 here, and redirect tests/cpp's
# find_package(GTest) to the targets they define (GTest::gtest_main, ...).
set(KILN_GOOGLETEST_SOURCE_DIR "/usr/src/googletest" CACHE PATH "GoogleTest sources (Debian: libgtest-dev)")
if(NOT EXISTS "${KILN_GOOGLETEST_SOURCE_DIR}/CMakeLists.txt")
  message(FATAL_ERROR "linux-aarch64 tests need GoogleTest's sources in ${KILN_GOOGLETEST_SOURCE_DIR} "
                      "(apt-get install libgtest-dev) or -DKILN_GOOGLETEST_SOURCE_DIR=<dir>")
endif()
set(INSTALL_GTEST OFF CACHE BOOL "")
add_subdirectory("${KILN_GOOGLETEST_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/googletest" EXCLUDE_FROM_ALL)
file(WRITE "${CMAKE_FIND_PACKAGE_REDIRECTS_DIR}/gtest-config.cmake"
     "# GTest comes from add_subdirectory(${KILN_GOOGLETEST_SOURCE_DIR}) (tools/cmake/presets/arm-linux-aarch64.cmake)\n")
