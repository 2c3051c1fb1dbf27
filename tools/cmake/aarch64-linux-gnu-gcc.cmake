# Toolchain file for 64-bit Arm Linux with Debian's cross compiler
# (apt-get install gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user).
# Executables built here run on the build machine through qemu-user; ctest and
# try_run use the emulator named below. Libraries and headers come from Debian's
# cross sysroot (/usr/aarch64-linux-gnu).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

find_program(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
find_program(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
if(NOT CMAKE_C_COMPILER OR NOT CMAKE_CXX_COMPILER)
  message(FATAL_ERROR "aarch64-linux-gnu-gcc/g++ not found: apt-get install "
                      "gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user")
endif()

# No fused multiply-add contraction (AArch64 has FMA; GCC fuses by default in C++): the
# kernels' results stay bit-identical to the x86-64 host runtime's.
set(CMAKE_C_FLAGS_INIT "-ffp-contract=off")
set(CMAKE_CXX_FLAGS_INIT "-ffp-contract=off")
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
find_program(KILN_QEMU_AARCH64 qemu-aarch64 REQUIRED)
# -L: where the emulator finds the dynamic loader and libstdc++ of the target.
set(CMAKE_CROSSCOMPILING_EMULATOR "${KILN_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
