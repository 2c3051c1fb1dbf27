# Toolchain file for bare-metal Arm Cortex-M with Debian's arm-none-eabi GCC (12.2).
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=tools/cmake/arm-none-eabi-gcc.cmake -DTARGET_CPU=cortex-m55 ...
#
# One cache variable, TARGET_CPU, chooses the core; the float ABI and the FPU/MVE flags
# follow from it, so a preset never spells out -mfpu by hand. Firmware is size-optimised
# (-Os) with every function and object in its own section, and the linker drops what is
# unreferenced (--gc-sections). No exceptions, no RTTI, no libstdc++: the runtime needs
# only C++ headers (libstdc++-arm-none-eabi-dev) and newlib-nano for vsnprintf/memcpy.

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(TARGET_CPU "cortex-m55" CACHE STRING "Cortex-M core: cortex-m55, cortex-m85, cortex-m33, cortex-m7, cortex-m4")
set_property(CACHE TARGET_CPU PROPERTY STRINGS cortex-m55 cortex-m85 cortex-m33 cortex-m7 cortex-m4)
# try_compile projects run this file again; hand them the choice.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TARGET_CPU)

set(_kiln_prefix "arm-none-eabi-")
find_program(CMAKE_C_COMPILER "${_kiln_prefix}gcc")
find_program(CMAKE_CXX_COMPILER "${_kiln_prefix}g++")
find_program(CMAKE_ASM_COMPILER "${_kiln_prefix}gcc")
if(NOT CMAKE_C_COMPILER OR NOT CMAKE_CXX_COMPILER)
  message(FATAL_ERROR "arm-none-eabi-gcc/g++ not found: apt-get install gcc-arm-none-eabi "
                      "libnewlib-arm-none-eabi libstdc++-arm-none-eabi-dev")
endif()
find_program(CMAKE_OBJCOPY "${_kiln_prefix}objcopy")
find_program(CMAKE_SIZE "${_kiln_prefix}size")
find_program(CMAKE_OBJDUMP "${_kiln_prefix}objdump")

# Executables cannot be linked without a linker script and startup code, so the
# compiler checks build a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# Core -> architecture flags. MVE (Helium) is part of -mcpu for M55/M85; the others get
# their single- or double-precision FPU named explicitly.
if(TARGET_CPU STREQUAL "cortex-m55")
  set(_kiln_cpu_flags "-mcpu=cortex-m55 -mfloat-abi=hard")
  set(KILN_TARGET_HAS_MVE ON)
elseif(TARGET_CPU STREQUAL "cortex-m85")
  # GCC learns -mcpu=cortex-m85 in version 13; Debian's 12.2 gets the same architecture
  # (Armv8.1-M with MVE, single and double precision FP) spelled out instead.
  execute_process(COMMAND "${CMAKE_C_COMPILER}" -mcpu=cortex-m85 -mfloat-abi=hard -x c -E -
                  INPUT_FILE /dev/null OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE _kiln_no_m85)
  if(_kiln_no_m85 EQUAL 0)
    set(_kiln_cpu_flags "-mcpu=cortex-m85 -mfloat-abi=hard")
  else()
    set(_kiln_cpu_flags "-march=armv8.1-m.main+mve.fp+fp.dp -mfloat-abi=hard")
  endif()
  set(KILN_TARGET_HAS_MVE ON)
elseif(TARGET_CPU STREQUAL "cortex-m33")
  set(_kiln_cpu_flags "-mcpu=cortex-m33 -mfpu=fpv5-sp-d16 -mfloat-abi=hard")
  set(KILN_TARGET_HAS_MVE OFF)
elseif(TARGET_CPU STREQUAL "cortex-m7")
  set(_kiln_cpu_flags "-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard")
  set(KILN_TARGET_HAS_MVE OFF)
elseif(TARGET_CPU STREQUAL "cortex-m4")
  set(_kiln_cpu_flags "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
  set(KILN_TARGET_HAS_MVE OFF)
else()
  message(FATAL_ERROR "TARGET_CPU='${TARGET_CPU}' is not supported; choose one of "
                      "cortex-m55, cortex-m85, cortex-m33, cortex-m7, cortex-m4")
endif()

# Sections per function/object for --gc-sections; no exceptions/RTTI (C++) and no
# thread-safe statics (there are no threads, and the guards would need libstdc++).
# -ffp-contract=off: GCC would otherwise fuse a * b + c into one FMA in C++ (the M55 and
# M4F have VFMA, an x86-64 host without -mfma has not), rounding once instead of twice;
# kernels then give results that differ in the last bit from the host runtime's.
# Firmware outputs are checked against the host runtime's bit for bit.
set(_kiln_common_flags "-mthumb ${_kiln_cpu_flags} -ffunction-sections -fdata-sections -ffp-contract=off")
set(CMAKE_C_FLAGS_INIT "${_kiln_common_flags}")
set(CMAKE_CXX_FLAGS_INIT
    "${_kiln_common_flags} -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
set(CMAKE_ASM_FLAGS_INIT "${_kiln_common_flags}")
# Full newlib, not newlib-nano: nano's printf has no %zu and no %ll, which the runtime's
# messages use. No host start files (the platform has its own) and no libstdc++:
# only its headers are needed (libstdc++-arm-none-eabi-dev; platform/cxx_support.cpp
# has the few support symbols). GCC 12 has no -nostdlib++, so the default libraries are
# dropped (-nodefaultlibs) and the C ones named again below.
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "${_kiln_cpu_flags} -mthumb --specs=nosys.specs -nostartfiles -nodefaultlibs -Wl,--gc-sections")

set(CMAKE_C_STANDARD_LIBRARIES "-Wl,--start-group -lc -lm -lgcc -lnosys -Wl,--end-group")
set(CMAKE_CXX_STANDARD_LIBRARIES "${CMAKE_C_STANDARD_LIBRARIES}")

# Firmware is built for size unless the user asks otherwise.
set(CMAKE_C_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")
set(CMAKE_CXX_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE MinSizeRel CACHE STRING "Build type (firmware default: MinSizeRel, -Os)")
endif()

# Libraries and headers come from the cross toolchain only; programs (flatc, python)
# from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
