# Writes what the firmware build generates from a board file, without building anything:
# its linker script and its compile definitions (one per line).
#
#   cmake -DKILN_BOARD_FILE=/abs/board.json -DOUTPUT_DIR=/abs/dir -P examples/arm/platform/generate_board_files.cmake
#
# leaves <OUTPUT_DIR>/<name>.ld and <OUTPUT_DIR>/<name>.defines, the same files a firmware
# build folder has in examples/arm/, and <OUTPUT_DIR>/<name>.fit: the board's -D arguments of
# the build's memory-fit check (check_memory_fit.cmake), one per line. The tests compare
# them with what kiln.boards reads and run the check with them.
cmake_minimum_required(VERSION 3.25)
if(NOT KILN_BOARD_FILE OR NOT OUTPUT_DIR)
  message(FATAL_ERROR "usage: cmake -DKILN_BOARD_FILE=<board.json> -DOUTPUT_DIR=<dir> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/board_profile.cmake")
get_filename_component(_board_file "${KILN_BOARD_FILE}" ABSOLUTE)
kiln_board_read("${_board_file}")
kiln_board_write_linker_script("${OUTPUT_DIR}/${KILN_BOARD_NAME}.ld")
kiln_board_write_definitions("${OUTPUT_DIR}/${KILN_BOARD_NAME}.defines")
kiln_board_fit_check_arguments(_fit_arguments)
list(JOIN _fit_arguments "\n" _fit_text)
file(WRITE "${OUTPUT_DIR}/${KILN_BOARD_NAME}.fit" "${_fit_text}\n")
foreach(_suffix ld defines fit)
  message(STATUS "${OUTPUT_DIR}/${KILN_BOARD_NAME}.${_suffix}")
endforeach()
