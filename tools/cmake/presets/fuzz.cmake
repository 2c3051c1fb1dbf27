# Preset "fuzz": clang with libFuzzer's coverage instrumentation, AddressSanitizer and
# UndefinedBehaviorSanitizer over all of Kiln, and the fuzz targets (tests/fuzz), which
# ctest runs for KILN_FUZZ_SECONDS each. Debug (Result::get() checks on), at -O1
# (CMakePresets.json) so that fuzzing is not ten times slower than it needs to be.
set(CMAKE_BUILD_TYPE Debug CACHE STRING "")
set(KILN_BUILD_TESTS OFF CACHE BOOL "")
set(KILN_BUILD_HOST_RUNNER OFF CACHE BOOL "")
set(KILN_BUILD_PYTHON OFF CACHE BOOL "")
set(KILN_BUILD_ETHOS_U ON CACHE BOOL "")
set(KILN_ENABLE_SANITIZERS ON CACHE BOOL "")
set(KILN_BUILD_FUZZERS ON CACHE BOOL "")
