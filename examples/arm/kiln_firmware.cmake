# kiln_add_firmware(): one firmware ELF that runs one embedded .pte program.
#
#   kiln_add_firmware(NAME <target>
#     PTE <model.pte>                 the program, embedded in DDR (section .kiln_program)
#     MEMORY_HEADER <model_memory.h>  its memory manifest header (kiln.memory.manifest)
#     [INPUTS <input_0.npy> ...]      the method's inputs, in order, embedded as .npy
#     [EXPECTED_OUTPUTS <out_0.npy> ...]  outputs to compare bit for bit (exit 2 if not)
#     [ETHOS_U]                       register the EthosUBackend on the board's NPU (the
#                                     register-level driver; needs KILN_BUILD_ETHOS_U and a
#                                     board with an NPU)
#     [NPU_TARGET <target>]           the Ethos-U the firmware is built for, e.g.
#                                     ethos-u55-128 (a device model is made as this one;
#                                     default: the program's target from its memory header,
#                                     else the board's first NPU family's smallest
#                                     configuration Kiln's tests use)
#     [SELECTIVE [DTYPE_SELECTIVE]]   link only the kernels the program calls [compiled
#                                     for only the dtypes its calls use]
#     [ETDUMP <host path> [ETDUMP_BYTES n]]  record an ETDump of the run into n bytes of DDR
#                                     (default 256 KiB) and write it to the host file
#                                     (semihosting)
#     [BUNDLE_RTOL x] [BUNDLE_ATOL y] tolerance of the test cases when PTE is a bundled
#                                     program (.bpte; default 1e-5, 1e-8)
#     [FILL_PLANNED byte]             fill the planned buffers with this byte before the
#                                     method loads (what silicon's uninitialized RAM may
#                                     hold; QEMU starts RAM at zero)
#     [DEPENDS <target or file> ...])     what produces the files, if they are built
#
# Kernels: with SELECTIVE, a library <target>_kernels generated from the program
# (kiln_selective_kernels(... OPS_FROM_PROGRAM), tools/cmake/KilnSelectiveBuild.cmake):
# a program that needs an operator or dtype no kernel library provides fails the build
# (the configure, if the .pte exists then), naming the operator, the dtype and the
# program. Otherwise `kiln_kernels_selected` (the global KILN_SELECT_OPS_* selection) if
# it exists, else every portable and Cortex-M kernel (kiln::kernels_cpu). Exactly one of
# them: each defines kiln::register_cpu_kernels(), which the runner calls.
#
# The files are embedded with the assembler's .incbin: no tool beyond CMake and the
# cross compiler, and a changed file re-assembles only this firmware. The firmware's
# pools are sized by the memory header; a program too large for the board fails the
# build, before anything of this firmware is compiled, naming the board region and the
# sizes (target <target>_fits_board: platform/check_memory_fit.cmake against the build's
# board file).
# Produces <target>.elf, <target>.elf.map and prints its size after linking.

include("${CMAKE_CURRENT_LIST_DIR}/platform/board_profile.cmake")

# 32-byte aligned: a bundled program's flatbuffer aligns the .pte inside it to 32 bytes
# from its own start (a .pte alone needs 16).
function(_kiln_firmware_incbin out_var label file)
  set(${out_var} "${${out_var}}  .balign 32\n${label}:\n  .incbin \"${file}\"\n${label}_end:\n" PARENT_SCOPE)
endfunction()

function(kiln_add_firmware)
  cmake_parse_arguments(FW "ETHOS_U;SELECTIVE;DTYPE_SELECTIVE"
                        "NAME;PTE;MEMORY_HEADER;ETDUMP;ETDUMP_BYTES;BUNDLE_RTOL;BUNDLE_ATOL;FILL_PLANNED;NPU_TARGET"
                        "INPUTS;EXPECTED_OUTPUTS;DEPENDS" ${ARGN})
  if(NOT FW_NAME OR NOT FW_PTE OR NOT FW_MEMORY_HEADER)
    message(FATAL_ERROR "kiln_add_firmware needs NAME, PTE and MEMORY_HEADER")
  endif()
  if(FW_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_firmware(${FW_NAME}): unknown arguments ${FW_UNPARSED_ARGUMENTS}")
  endif()
  if(FW_DTYPE_SELECTIVE AND NOT FW_SELECTIVE)
    message(FATAL_ERROR "kiln_add_firmware(${FW_NAME}): DTYPE_SELECTIVE needs SELECTIVE")
  endif()
  foreach(_file IN ITEMS ${FW_PTE} ${FW_MEMORY_HEADER} ${FW_INPUTS} ${FW_EXPECTED_OUTPUTS})
    if(NOT IS_ABSOLUTE "${_file}")
      message(FATAL_ERROR "kiln_add_firmware(${FW_NAME}): give absolute paths (${_file})")
    endif()
  endforeach()

  set(_runner_dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/executor_runner")
  kiln_board_use()

  # The embedded files and the tables that describe them (embedded_files.h).
  set(_data "")
  _kiln_firmware_incbin(_data kiln_fw_program "${FW_PTE}")
  set(_inputs_table "")
  set(_index 0)
  foreach(_input IN LISTS FW_INPUTS)
    _kiln_firmware_incbin(_data kiln_fw_input_${_index} "${_input}")
    string(APPEND _inputs_table "  .word kiln_fw_input_${_index}, kiln_fw_input_${_index}_end - kiln_fw_input_${_index}\n")
    math(EXPR _index "${_index} + 1")
  endforeach()
  list(LENGTH FW_INPUTS _num_inputs)
  set(_expected_table "")
  set(_index 0)
  foreach(_output IN LISTS FW_EXPECTED_OUTPUTS)
    _kiln_firmware_incbin(_data kiln_fw_expected_${_index} "${_output}")
    string(APPEND _expected_table "  .word kiln_fw_expected_${_index}, kiln_fw_expected_${_index}_end - kiln_fw_expected_${_index}\n")
    math(EXPR _index "${_index} + 1")
  endforeach()
  list(LENGTH FW_EXPECTED_OUTPUTS _num_expected)

  set(_asm "${CMAKE_CURRENT_BINARY_DIR}/${FW_NAME}_embedded.S")
  file(GENERATE OUTPUT "${_asm}" CONTENT
"/* Generated by kiln_add_firmware(${FW_NAME}): the embedded program and its tensors. */
  .section .kiln_program, \"a\"
${_data}
  .section .rodata.kiln_embedded, \"a\"
  .balign 4
  .global kiln_embedded_program
kiln_embedded_program:
  .word kiln_fw_program, kiln_fw_program_end - kiln_fw_program
  .global kiln_embedded_inputs
kiln_embedded_inputs:
${_inputs_table}  .word 0, 0
  .global kiln_embedded_num_inputs
kiln_embedded_num_inputs:
  .word ${_num_inputs}
  .global kiln_embedded_expected_outputs
kiln_embedded_expected_outputs:
${_expected_table}  .word 0, 0
  .global kiln_embedded_num_expected_outputs
kiln_embedded_num_expected_outputs:
  .word ${_num_expected}
  .global kiln_embedded_firmware_name
kiln_embedded_firmware_name:
  .asciz \"${FW_NAME}\"
")
  set_source_files_properties("${_asm}" PROPERTIES
    OBJECT_DEPENDS "${FW_PTE};${FW_INPUTS};${FW_EXPECTED_OUTPUTS}")

  # The kernels: a library defining kiln::register_cpu_kernels() (every portable and
  # Cortex-M kernel, or a selection layering both tables into one).
  if(FW_SELECTIVE)
    set(_kernels ${FW_NAME}_kernels)
    set(_dtypes "")
    if(FW_DTYPE_SELECTIVE)
      set(_dtypes DTYPES_FROM_PROGRAM)
    endif()
    set(_made_by "")
    if(FW_DEPENDS)
      # The program is built: select (and check) when it is, never from a stale copy.
      set(_made_by DEPENDS ${FW_DEPENDS})
    endif()
    kiln_selective_kernels(${_kernels} NAME cpu OPS_FROM_PROGRAM "${FW_PTE}" ${_dtypes} ${_made_by}
                           LIBRARIES cortex_m portable)
  elseif(TARGET kiln_kernels_selected)
    set(_kernels kiln_kernels_selected)
  else()
    set(_kernels kiln::kernels_cpu)
  endif()

  # Does the program fit the board? Checked when the build runs (the memory header may be
  # made by the build itself), as its own target: kiln-deploy builds it first.
  if(NOT FW_ETDUMP_BYTES)
    set(FW_ETDUMP_BYTES 262144)
  endif()
  set(_etdump_bytes 0)
  if(FW_ETDUMP)
    set(_etdump_bytes ${FW_ETDUMP_BYTES})
  endif()
  kiln_board_fit_check_arguments(_board_arguments)
  set(_embedded_files ${FW_PTE} ${FW_INPUTS} ${FW_EXPECTED_OUTPUTS})
  list(JOIN _embedded_files "|" _embedded)
  set(_fits_stamp "${CMAKE_CURRENT_BINARY_DIR}/${FW_NAME}_fits_board.stamp")
  add_custom_command(
    OUTPUT "${_fits_stamp}"
    COMMAND "${CMAKE_COMMAND}" "-DMEMORY_HEADER=${FW_MEMORY_HEADER}" "-DEMBEDDED=${_embedded}"
            "-DEXTRA_DDR_BYTES=${_etdump_bytes}" ${_board_arguments} "-DSTAMP=${_fits_stamp}"
            -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/platform/check_memory_fit.cmake"
    DEPENDS "${FW_MEMORY_HEADER}" ${_embedded_files} "${KILN_BOARD_FILE_READ}"
            "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/platform/check_memory_fit.cmake"
    COMMENT "Checking that ${FW_NAME}'s program and pools fit board ${KILN_BOARD_NAME}"
    VERBATIM)
  add_custom_target(${FW_NAME}_fits_board DEPENDS "${_fits_stamp}")
  foreach(_dependency IN LISTS FW_DEPENDS)
    if(NOT IS_ABSOLUTE "${_dependency}")
      add_dependencies(${FW_NAME}_fits_board ${_dependency})
    endif()
  endforeach()

  add_executable(${FW_NAME}
    "${_asm}"
    "${_runner_dir}/memory_pools.cpp"
    "${_runner_dir}/firmware_options.cpp"
    "${FW_MEMORY_HEADER}")
  add_dependencies(${FW_NAME} ${FW_NAME}_fits_board)
  if(FW_ETDUMP)
    target_compile_definitions(${FW_NAME} PRIVATE "KILN_FIRMWARE_ETDUMP_PATH=\"${FW_ETDUMP}\""
                               "KILN_FIRMWARE_ETDUMP_BYTES=${FW_ETDUMP_BYTES}")
  endif()
  if(FW_BUNDLE_RTOL)
    target_compile_definitions(${FW_NAME} PRIVATE "KILN_FIRMWARE_BUNDLE_RTOL=${FW_BUNDLE_RTOL}")
  endif()
  if(FW_BUNDLE_ATOL)
    target_compile_definitions(${FW_NAME} PRIVATE "KILN_FIRMWARE_BUNDLE_ATOL=${FW_BUNDLE_ATOL}")
  endif()
  if(NOT "${FW_FILL_PLANNED}" STREQUAL "")
    if(NOT FW_FILL_PLANNED MATCHES "^[0-9]+$" OR FW_FILL_PLANNED GREATER 255)
      message(FATAL_ERROR "kiln_add_firmware(${FW_NAME}): FILL_PLANNED is a byte, 0 to 255 (got '${FW_FILL_PLANNED}')")
    endif()
    target_compile_definitions(${FW_NAME} PRIVATE "KILN_FIRMWARE_FILL_PLANNED=${FW_FILL_PLANNED}")
  endif()
  if(FW_NPU_TARGET)
    if(NOT FW_NPU_TARGET MATCHES "^ethos-u(55|65|85)-[0-9]+$")
      message(FATAL_ERROR "kiln_add_firmware(${FW_NAME}): NPU_TARGET '${FW_NPU_TARGET}' is not an Ethos-U "
                          "configuration (e.g. ethos-u55-128, ethos-u85-256)")
    endif()
    target_compile_definitions(${FW_NAME} PRIVATE "KILN_FIRMWARE_NPU_TARGET=\"${FW_NPU_TARGET}\"")
  elseif(KILN_BOARD_HAS_NPU)
    # The board's first NPU family, in a configuration every Kiln test compiles for.
    list(GET KILN_BOARD_NPU_FAMILIES 0 _family)
    set(_default_macs_ethos-u55 128)
    set(_default_macs_ethos-u65 256)
    set(_default_macs_ethos-u85 256)
    target_compile_definitions(${FW_NAME} PRIVATE
      "KILN_FIRMWARE_DEFAULT_NPU_TARGET=\"${_family}-${_default_macs_${_family}}\"")
  endif()
  set_target_properties(${FW_NAME} PROPERTIES SUFFIX ".elf")
  target_compile_definitions(${FW_NAME} PRIVATE "KILN_MEMORY_HEADER=\"${FW_MEMORY_HEADER}\"")
  set_source_files_properties("${_runner_dir}/memory_pools.cpp"
    TARGET_DIRECTORY ${FW_NAME} PROPERTIES OBJECT_DEPENDS "${FW_MEMORY_HEADER}")
  target_link_libraries(${FW_NAME} PRIVATE
    kiln_arm_runner kiln_arm_platform ${_kernels} kiln::runtime kiln_compile_options)
  target_link_options(${FW_NAME} PRIVATE "-Wl,-Map=$<TARGET_FILE:${FW_NAME}>.map")
  if(FW_ETHOS_U)
    if(NOT TARGET kiln_arm_ethos_u)
      message(FATAL_ERROR "kiln_add_firmware(${FW_NAME} ETHOS_U) needs -DKILN_BUILD_ETHOS_U=ON and a board "
                          "with an NPU (board ${KILN_BOARD_NAME})")
    endif()
    target_link_libraries(${FW_NAME} PRIVATE kiln_arm_ethos_u)
    # An object library's objects reach only the executables that link it directly.
    if(TARGET kiln_arm_npu_device_model)
      target_link_libraries(${FW_NAME} PRIVATE kiln_arm_npu_device_model)
    endif()
  endif()
  # Targets order the build; files (absolute paths) are already dependencies of the
  # embedding assembly (OBJECT_DEPENDS) and of the kernel selection.
  foreach(_dependency IN LISTS FW_DEPENDS)
    if(NOT IS_ABSOLUTE "${_dependency}")
      add_dependencies(${FW_NAME} ${_dependency})
    endif()
  endforeach()
  if(CMAKE_SIZE)
    add_custom_command(TARGET ${FW_NAME} POST_BUILD
      COMMAND "${CMAKE_SIZE}" "$<TARGET_FILE:${FW_NAME}>"
      VERBATIM)
  endif()
endfunction()
