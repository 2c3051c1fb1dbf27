# KILN_CORTEX_M_CASES_FILE: the per-operator case file of the cortex_m:: kernels, made at
# build time by tests/python/cortex_m/make_kernel_cases.py with ExecuTorch 1.5.1's
# Python (KILN_EXECUTORCH_PYTHON: the cache variable, else the environment's, else
# <source>/.venv-executorch), unless the environment's KILN_CORTEX_M_CASES_PREBUILT names
# an existing case file to use instead. Without that Python, a test named
# cortex_m_kernel_cases_need_executorch fails and says how to get it.
if(NOT KILN_EXECUTORCH_PYTHON)
  if(DEFINED ENV{KILN_EXECUTORCH_PYTHON} AND EXISTS "$ENV{KILN_EXECUTORCH_PYTHON}")
    set(KILN_EXECUTORCH_PYTHON "$ENV{KILN_EXECUTORCH_PYTHON}" CACHE FILEPATH "ExecuTorch 1.5.1's Python" FORCE)
  elseif(EXISTS "${PROJECT_SOURCE_DIR}/.venv-executorch/bin/python")
    set(KILN_EXECUTORCH_PYTHON "${PROJECT_SOURCE_DIR}/.venv-executorch/bin/python" CACHE FILEPATH
        "ExecuTorch 1.5.1's Python" FORCE)
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
  set(KILN_CORTEX_M_CASES_FILE "")
  add_test(NAME cortex_m_kernel_cases_need_executorch
    COMMAND "${CMAKE_COMMAND}" -E echo
            "The Cortex-M kernel cases are made with ExecuTorch 1.5.1's Python: run tools/setup_executorch.sh and set KILN_EXECUTORCH_PYTHON")
  set_tests_properties(cortex_m_kernel_cases_need_executorch PROPERTIES FAIL_REGULAR_EXPRESSION "ExecuTorch")
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
