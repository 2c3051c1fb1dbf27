# Preset "host": an optimised build for this machine, with the C++ tests.
set(CMAKE_BUILD_TYPE Release CACHE STRING "")
set(KILN_BUILD_TESTS ON CACHE BOOL "")
set(KILN_BUILD_HOST_RUNNER ON CACHE BOOL "")
