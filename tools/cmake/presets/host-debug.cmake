# Preset "host-debug": debug build under AddressSanitizer and UndefinedBehaviorSanitizer;
# the C++ tests (hostile .pte files included) run under both.
set(CMAKE_BUILD_TYPE Debug CACHE STRING "")
set(KILN_BUILD_TESTS ON CACHE BOOL "")
set(KILN_BUILD_HOST_RUNNER ON CACHE BOOL "")
set(KILN_ENABLE_SANITIZERS ON CACHE BOOL "")
