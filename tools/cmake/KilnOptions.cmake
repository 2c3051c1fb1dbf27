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

function(kiln_print_options)
  message(STATUS "Kiln ${PROJECT_VERSION} build options:")
  foreach(name IN LISTS KILN_OPTION_NAMES)
    message(STATUS "  ${name} = ${${name}}")
  endforeach()
endfunction()
