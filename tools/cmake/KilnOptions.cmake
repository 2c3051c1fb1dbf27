# Every Kiln build option is declared here, once, and printed at configure time.
# Presets only choose values (tools/cmake/presets/*.cmake); they never declare options.

set(KILN_OPTION_NAMES "")

macro(kiln_option name help default)
  option(${name} "${help}" ${default})
  list(APPEND KILN_OPTION_NAMES ${name})
endmacro()

macro(kiln_string_option name help default)
  set(${name} "${default}" CACHE STRING "${help}")
  list(APPEND KILN_OPTION_NAMES ${name})
endmacro()

kiln_option(KILN_BUILD_TESTS "Build the GoogleTest suites (tests/cpp)" OFF)
kiln_option(KILN_BUILD_PYTHON "Build the Python extension module kiln._runtime" OFF)
kiln_option(KILN_BUILD_HOST_RUNNER "Build the host runner (examples/host)" ON)
kiln_option(KILN_ENABLE_SANITIZERS "Compile with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
kiln_string_option(KILN_PAL "Platform abstraction layer: posix or minimal" "posix")
kiln_string_option(KILN_LOG_LEVEL "Lowest log level compiled in: Debug, Info, Error, Fatal" "Info")
# Bare-metal Arm (issue 5): runner firmware for Corstone-300, its QEMU tests, the Ethos-U delegate.
kiln_option(KILN_BUILD_FIRMWARE "Build the Arm runner firmware (examples/arm; arm-none-eabi toolchain)" OFF)
kiln_option(KILN_BUILD_FIRMWARE_TESTS "Add firmware tests that run in QEMU (tests/firmware)" OFF)
kiln_option(KILN_BUILD_ETHOS_U "Build the Ethos-U delegate with the virtual NPU as its driver (backends/arm)" OFF)
kiln_option(KILN_FIRMWARE_TEST_MV2 "Add the MobileNetV2 Ethos-U firmware test (about 30 s: compile + 3.5 G instructions in QEMU)" ON)
# Selective build (issue 6; tools/cmake/KilnSelectiveBuild.cmake): runners link only these kernels.
kiln_string_option(KILN_SELECT_OPS_PROGRAM "Runners get only the kernels these .pte programs call (a ;-list)" "")
kiln_string_option(KILN_SELECT_OPS_LIST "Runners get only these operators (aten::add.out,aten::relu.out,...)" "")
kiln_string_option(KILN_SELECT_OPS_YAML "Runners get only the operators of this YAML (kiln-oplist --yaml)" "")
kiln_option(KILN_DTYPE_SELECTIVE "Compile kernels with only the dtypes the selected program uses" OFF)
kiln_string_option(KILN_PYTHON "Python with Kiln installed, runs kiln-aot at build time (default: the active venv)" "")

function(kiln_print_options)
  message(STATUS "Kiln ${PROJECT_VERSION} build options:")
  foreach(name IN LISTS KILN_OPTION_NAMES)
    message(STATUS "  ${name} = ${${name}}")
  endforeach()
endfunction()
