# Selective build: kernel libraries with generated, explicit registration of only the
# operators (and dtypes) a program needs.
#
# Each kernel library declares its op table once:
#
#   kiln_add_kernel_library(NAME portable TABLE op_table.yaml [LINK <support targets>...])
#
# and any number of registration libraries are generated from the tables:
#
#   kiln_selective_kernels(<target>
#     ALL | OPS a,b,c | OPS_YAML sel.yaml | OPS_FROM_PROGRAM m.pte [m2.pte ...]
#     [DTYPES_FROM_PROGRAM]        compile each kernel with only the dtypes the program's
#                                  calls of its operators use (also DTYPE_SELECTIVE, for
#                                  an OPS_YAML that lists dtypes)
#     [LIBRARIES optimized portable ...]  op tables, MOST SPECIFIC FIRST (default: portable).
#                                  Each operator gets the kernel of the first library that
#                                  has it and supports every dtype the selection needs.
#     [NAME <name>]                the generated function: kiln::Error
#                                  kiln::register_<name>_kernels() (C: kiln_register_<name>_kernels());
#                                  default: <target> without a "kiln_" prefix and "_kernels" suffix
#     [DEPENDS <targets/files>])   what builds the .pte, when it is made at build time
#
# creates a static library <target> with the generated registration and only the selected
# kernels' sources. The code generator (tools/codegen/gen_registration.py) runs with the
# Python that find_package(Python3) finds (the Kiln venv): at configure time it checks the
# selection and lists the sources, at build time it writes the code. A selection that no
# library can satisfy stops the configure with one line per problem naming the operator,
# the dtype and the program:
#   kiln selective build: error: program /p/m.pte needs operator aten::foo.out with dtypes Float,
#   but no kernel library provides it (searched portable (.../op_table.yaml))
# A program that does not exist yet at configure time (built by DEPENDS) cannot be checked
# then: every source of the libraries is compiled, the linker keeps only the selected
# kernels' objects, and the same check fails the build instead.
#
# The cache options KILN_SELECT_OPS_PROGRAM / _LIST / _YAML and KILN_DTYPE_SELECTIVE
# (tools/cmake/KilnOptions.cmake) make kiln_kernels_selected_from_options() create
# `kiln_kernels_selected`, which the runners link instead of every CPU kernel.
# It is generated with NAME cpu over the cortex_m and portable tables: a drop-in for
# kiln::kernels_cpu, whose kiln::register_cpu_kernels() (kernels/register_cpu_kernels.h)
# registers every portable and Cortex-M kernel; the selection's registers the selected ones.
include_guard(GLOBAL)

find_package(Python3 COMPONENTS Interpreter REQUIRED)
# Cached so that kiln_selective_kernels() works from any directory (e.g. a project that
# add_subdirectory()s Kiln), where find_package's variables are not visible.
set(KILN_CODEGEN_PYTHON "${Python3_EXECUTABLE}" CACHE INTERNAL "")
set(KILN_CODEGEN_FLATC "${KILN_FLATC_EXECUTABLE}" CACHE INTERNAL "")  # KilnFlatbuffers.cmake
execute_process(COMMAND "${KILN_CODEGEN_PYTHON}" -c "import yaml"
                RESULT_VARIABLE _kiln_yaml_missing OUTPUT_QUIET ERROR_QUIET)
if(_kiln_yaml_missing)
  message(FATAL_ERROR "Kiln's kernel registration is generated from YAML op tables: "
                      "${Python3_EXECUTABLE} needs PyYAML (pip install pyyaml), or pass "
                      "-DPython3_EXECUTABLE=<the Kiln venv's python>")
endif()

get_filename_component(_KILN_ROOT "${CMAKE_CURRENT_LIST_DIR}/../.." REALPATH)
set(KILN_CODEGEN_SCRIPT "${_KILN_ROOT}/tools/codegen/gen_registration.py" CACHE INTERNAL "")
set(KILN_CODEGEN_DEPENDS
  "${_KILN_ROOT}/tools/codegen/gen_registration.py"
  "${_KILN_ROOT}/tools/codegen/op_tables.py"
  "${_KILN_ROOT}/python/kiln/passes/op_tables.py"
  "${_KILN_ROOT}/tools/codegen/selection.py"
  "${_KILN_ROOT}/python/kiln/serialize/operator_list.py" CACHE INTERNAL "")
set(KILN_PROGRAM_SCHEMA "${_KILN_ROOT}/runtime/schema/program.fbs" CACHE INTERNAL "")

# kiln_add_kernel_library(NAME <library> TABLE <op_table.yaml> [LINK <targets>...])
function(kiln_add_kernel_library)
  cmake_parse_arguments(LIB "" "NAME;TABLE" "LINK" ${ARGN})
  if(NOT LIB_NAME OR NOT LIB_TABLE)
    message(FATAL_ERROR "kiln_add_kernel_library needs NAME and TABLE")
  endif()
  get_filename_component(_table "${LIB_TABLE}" ABSOLUTE)
  set_property(GLOBAL APPEND PROPERTY KILN_KERNEL_LIBRARIES ${LIB_NAME})
  set_property(GLOBAL PROPERTY KILN_KERNEL_LIBRARY_${LIB_NAME}_TABLE "${_table}")
  set_property(GLOBAL PROPERTY KILN_KERNEL_LIBRARY_${LIB_NAME}_LINK "${LIB_LINK}")
endfunction()

# The flatc-generated Python reader of the .pte schema, made at configure time so that
# programs can be checked before anything is built.
function(_kiln_program_schema_module out_var)
  set(_dir "${CMAKE_BINARY_DIR}/kiln_selective/schema")
  set(_module "${_dir}/program_generated.py")
  if(NOT EXISTS "${_module}" OR "${KILN_PROGRAM_SCHEMA}" IS_NEWER_THAN "${_module}")
    execute_process(
      COMMAND "${KILN_CODEGEN_FLATC}" --python --gen-object-api --gen-onefile -o "${_dir}" "${KILN_PROGRAM_SCHEMA}"
      RESULT_VARIABLE _failed ERROR_VARIABLE _error)
    if(_failed)
      message(FATAL_ERROR "flatc could not generate the .pte reader for selective build: ${_error}")
    endif()
  endif()
  execute_process(COMMAND "${KILN_CODEGEN_PYTHON}" -c "import flatbuffers"
                  RESULT_VARIABLE _missing OUTPUT_QUIET ERROR_QUIET)
  if(_missing)
    message(FATAL_ERROR "Selecting kernels from a program reads the .pte with the flatbuffers "
                        "Python package: pip install flatbuffers into ${KILN_CODEGEN_PYTHON}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${KILN_PROGRAM_SCHEMA}")
  set(${out_var} "${_module}" PARENT_SCOPE)
endfunction()

function(kiln_selective_kernels target)
  cmake_parse_arguments(SEL "ALL;DTYPES_FROM_PROGRAM;DTYPE_SELECTIVE" "NAME;OPS_YAML"
                        "OPS;OPS_FROM_PROGRAM;LIBRARIES;DEPENDS" ${ARGN})
  if(SEL_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_selective_kernels(${target}): unknown arguments ${SEL_UNPARSED_ARGUMENTS}")
  endif()
  set(_kinds 0)
  foreach(_kind IN ITEMS SEL_ALL SEL_OPS SEL_OPS_YAML SEL_OPS_FROM_PROGRAM)
    if(${_kind})
      math(EXPR _kinds "${_kinds} + 1")
    endif()
  endforeach()
  if(NOT _kinds EQUAL 1)
    message(FATAL_ERROR "kiln_selective_kernels(${target}): give exactly one of ALL, OPS, OPS_YAML, OPS_FROM_PROGRAM")
  endif()
  if(NOT SEL_NAME)
    string(REGEX REPLACE "^kiln_" "" SEL_NAME "${target}")
    string(REGEX REPLACE "_kernels$" "" SEL_NAME "${SEL_NAME}")
  endif()
  if(NOT SEL_LIBRARIES)
    set(SEL_LIBRARIES portable)
  endif()

  # Arguments of the generator: tables (most specific first) and the selection.
  set(_args --name "${SEL_NAME}")
  set(_inputs ${KILN_CODEGEN_DEPENDS})
  set(_links "")
  foreach(_library IN LISTS SEL_LIBRARIES)
    get_property(_table GLOBAL PROPERTY KILN_KERNEL_LIBRARY_${_library}_TABLE)
    if(NOT _table)
      get_property(_known GLOBAL PROPERTY KILN_KERNEL_LIBRARIES)
      message(FATAL_ERROR "kiln_selective_kernels(${target}): no kernel library '${_library}' "
                          "(known: ${_known}); kiln_add_kernel_library() declares them")
    endif()
    get_property(_link GLOBAL PROPERTY KILN_KERNEL_LIBRARY_${_library}_LINK)
    list(APPEND _args --table "${_library}=${_table}")
    list(APPEND _inputs "${_table}")
    list(APPEND _links ${_link})
  endforeach()
  set(_known_at_configure TRUE)
  if(SEL_ALL)
    list(APPEND _args --all)
    set(_what "every operator")
  elseif(SEL_OPS)
    string(REPLACE "," ";" _ops "${SEL_OPS}")
    list(JOIN _ops "," _ops)
    list(APPEND _args --ops "${_ops}")
    set(_what "operators ${_ops}")
  elseif(SEL_OPS_YAML)
    get_filename_component(_yaml "${SEL_OPS_YAML}" ABSOLUTE)
    list(APPEND _args --ops-yaml "${_yaml}")
    list(APPEND _inputs "${_yaml}")
    set(_what "${_yaml}")
    if(NOT EXISTS "${_yaml}")
      set(_known_at_configure FALSE)
    endif()
  else()
    _kiln_program_schema_module(_schema)
    list(APPEND _args --schema-module "${_schema}")
    foreach(_program IN LISTS SEL_OPS_FROM_PROGRAM)
      get_filename_component(_program "${_program}" ABSOLUTE)
      list(APPEND _args --program "${_program}")
      list(APPEND _inputs "${_program}")
      if(NOT EXISTS "${_program}")
        set(_known_at_configure FALSE)
      endif()
    endforeach()
    set(_what "the operators of ${SEL_OPS_FROM_PROGRAM}")
  endif()
  if(SEL_DEPENDS)
    set(_known_at_configure FALSE)
  endif()
  set(_dtype_selective FALSE)
  if(SEL_DTYPES_FROM_PROGRAM OR SEL_DTYPE_SELECTIVE)
    set(_dtype_selective TRUE)
    list(APPEND _args --dtype-selective)
    string(APPEND _what ", dtype-selective")
  endif()

  # Configure time: check the selection and list the sources to compile.
  if(_known_at_configure)
    set(_list_args ${_args})
  else()
    # The selection is made at build time: compile every source of the libraries.
    list(APPEND _args --compile-all-sources)
    set(_list_args --name "${SEL_NAME}" --all)
    foreach(_library IN LISTS SEL_LIBRARIES)
      get_property(_table GLOBAL PROPERTY KILN_KERNEL_LIBRARY_${_library}_TABLE)
      list(APPEND _list_args --table "${_library}=${_table}")
    endforeach()
    message(STATUS "kiln_selective_kernels(${target}): ${_what} is made at build time; it is "
                   "checked then, and the linker keeps only the selected kernels")
  endif()
  execute_process(
    COMMAND "${KILN_CODEGEN_PYTHON}" "${KILN_CODEGEN_SCRIPT}" ${_list_args} --list-sources
    RESULT_VARIABLE _failed OUTPUT_VARIABLE _listed ERROR_VARIABLE _error
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_failed)
    message(FATAL_ERROR "kiln_selective_kernels(${target}) cannot be built from ${_what}:\n${_error}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_inputs})

  set(_gen "${CMAKE_CURRENT_BINARY_DIR}/${target}_registration")
  set(_outputs "${_gen}/register_${SEL_NAME}_kernels.cpp" "${_gen}/register_${SEL_NAME}_kernels.h")
  set(_sources "")
  foreach(_entry IN LISTS _listed)
    string(REGEX REPLACE "^([A-Za-z_0-9]+)=(.*)$" "\\1" _library "${_entry}")
    string(REGEX REPLACE "^([A-Za-z_0-9]+)=(.*)$" "\\2" _source "${_entry}")
    if(_dtype_selective)
      # Generated: defines the KILN_DTYPE_SELECTED_* macros, then includes the source.
      get_filename_component(_stem "${_source}" NAME_WE)
      list(APPEND _outputs "${_gen}/dtype_selective/${_library}/${_stem}.cpp")
      list(APPEND _sources "${_gen}/dtype_selective/${_library}/${_stem}.cpp")
    else()
      list(APPEND _sources "${_source}")
    endif()
  endforeach()

  # Build time: write the registration (and the dtype-selective wrappers).
  add_custom_command(
    OUTPUT ${_outputs}
    COMMAND "${KILN_CODEGEN_PYTHON}" "${KILN_CODEGEN_SCRIPT}" ${_args} --output-dir "${_gen}"
    DEPENDS ${_inputs} ${SEL_DEPENDS}
    COMMENT "kiln selective build: register_${SEL_NAME}_kernels() for ${_what}"
    VERBATIM)
  add_library(${target} STATIC "${_gen}/register_${SEL_NAME}_kernels.cpp" "${_gen}/register_${SEL_NAME}_kernels.h"
              ${_sources})
  target_include_directories(${target} PUBLIC "${_gen}")
  target_link_libraries(${target} PUBLIC kiln::runtime ${_links} PRIVATE kiln_compile_options)
  set_target_properties(${target} PROPERTIES KILN_REGISTRATION_FUNCTION "register_${SEL_NAME}_kernels")
  list(LENGTH _sources _count)
  message(STATUS "kiln_selective_kernels(${target}): register_${SEL_NAME}_kernels(), ${_count} kernel sources, ${_what}")
endfunction()

# kiln_kernels_selected from the cache options, if one of them is set.
function(kiln_kernels_selected_from_options)
  set(_selection "")
  set(_given 0)
  if(KILN_SELECT_OPS_PROGRAM)
    set(_selection OPS_FROM_PROGRAM ${KILN_SELECT_OPS_PROGRAM})
    math(EXPR _given "${_given} + 1")
  endif()
  if(KILN_SELECT_OPS_LIST)
    set(_selection OPS "${KILN_SELECT_OPS_LIST}")
    math(EXPR _given "${_given} + 1")
  endif()
  if(KILN_SELECT_OPS_YAML)
    set(_selection OPS_YAML "${KILN_SELECT_OPS_YAML}")
    math(EXPR _given "${_given} + 1")
  endif()
  if(_given GREATER 1)
    message(FATAL_ERROR "Set only one of KILN_SELECT_OPS_PROGRAM, KILN_SELECT_OPS_LIST, KILN_SELECT_OPS_YAML")
  endif()
  if(_given EQUAL 0)
    if(KILN_DTYPE_SELECTIVE)
      message(FATAL_ERROR "KILN_DTYPE_SELECTIVE needs a selection with dtypes: KILN_SELECT_OPS_PROGRAM "
                          "(or KILN_SELECT_OPS_YAML listing dtypes)")
    endif()
    return()
  endif()
  set(_dtypes "")
  if(KILN_DTYPE_SELECTIVE)
    set(_dtypes DTYPE_SELECTIVE)
  endif()
  kiln_selective_kernels(kiln_kernels_selected NAME cpu ${_selection} ${_dtypes} LIBRARIES cortex_m portable)
  add_library(kiln::kernels_selected ALIAS kiln_kernels_selected)
endfunction()
