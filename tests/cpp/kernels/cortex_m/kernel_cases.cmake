# KILN_CORTEX_M_CASES_FILE: the per-operator case file of the cortex_m:: kernels, made at
# build time by tests/python/cortex_m/make_kernel_cases.py with ExecuTorch 1.5.1's
# Python (KILN_EXECUTORCH_PYTHON: the cache variable, else the environment's, else
# <source>/.venv-executorch), unless the environment's KILN_CORTEX_M_CASES_PREBUILT names
# an existing case file to use instead. Without that Python, the tests that run the cases
# are left out and ctest reports a skipped test `cortex_m_kernel_cases` with the reason.
if(NOT KILN_EXECUTORCH_PYTHON)
  if(DEFINED ENV{KILN_EXECUTORCH_PYTHON} AND EXISTS "$ENV{KILN_EXECUTORCH_PYTHON}")
    set_property(CACHE KILN_EXECUTORCH_PYTHON PROPERTY VALUE "$ENV{KILN_EXECUTORCH_PYTHON}")
  elseif(EXISTS "${PROJECT_SOURCE_DIR}/.venv-executorch/bin/python")
    set_property(CACHE KILN_EXECUTORCH_PYTHON PROPERTY VALUE "${PROJECT_SOURCE_DIR}/.venv-executorch/bin/python")
  endif()
endif()
if(DEFINED ENV{KILN_CORTEX_M_CASES_PREBUILT} AND EXISTS "$ENV{KILN_CORTEX_M_CASES_PREBUILT}")
  # A case file another build of this checkout made (tools/test.sh: the host preset's),
  # which saves the ExecuTorch start-up per preset.
  set(KILN_CORTEX_M_CASES_FILE "$ENV{KILN_CORTEX_M_CASES_PREBUILT}")
  if(NOT TARGET kiln_cortex_m_cases_file)
    add_custom_target(kiln_cortex_m_cases_file)
  endif()
elseif(NOT KILN_EXECUTORCH_PYTHON)
  # Without ExecuTorch the cases cannot be made: the tests that run them are left out (said
  # at configure time), and ctest lists one skipped test that says why — never a failure.
  set(KILN_CORTEX_M_CASES_FILE "")
  if(NOT TEST cortex_m_kernel_cases)
    set(_why "the Cortex-M kernel cases (ExecuTorch's reference outputs) need ExecuTorch 1.5.1's Python: "
             "run tools/setup_executorch.sh, then configure again with KILN_EXECUTORCH_PYTHON=<the python it prints>")
    string(CONCAT _why ${_why})
    message(STATUS "Left out: test_cortex_m_kernel_cases / firmware_cortex_m_kernel_cases: ${_why}")
    add_test(NAME cortex_m_kernel_cases COMMAND "${CMAKE_COMMAND}" -E echo "Skipped: ${_why}")
    set_tests_properties(cortex_m_kernel_cases PROPERTIES SKIP_REGULAR_EXPRESSION "^Skipped: ")
  endif()
else()
  set(KILN_CORTEX_M_CASES_FILE "${CMAKE_BINARY_DIR}/cortex_m_cases/cases.bin")
  if(NOT TARGET kiln_cortex_m_cases_file)
    set(_maker "${PROJECT_SOURCE_DIR}/tests/python/cortex_m/make_kernel_cases.py")
    add_custom_command(
      OUTPUT "${KILN_CORTEX_M_CASES_FILE}"
      COMMAND "${KILN_EXECUTORCH_PYTHON}" "${_maker}" "${KILN_CORTEX_M_CASES_FILE}"
      DEPENDS "${_maker}"
      COMMENT "ExecuTorch's reference: the cortex_m:: kernel cases"
      VERBATIM)
    add_custom_target(kiln_cortex_m_cases_file DEPENDS "${KILN_CORTEX_M_CASES_FILE}")
  endif()
endif()
