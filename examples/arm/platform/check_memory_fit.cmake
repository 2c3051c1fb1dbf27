# Build-time check that a program fits its board, run by kiln_add_firmware() before the
# firmware compiles: the pools its memory manifest places in "SRAM" and "DDR" (with the
# ETDump buffer, if any), and the embedded files (program, inputs, expected outputs, each
# 32-byte aligned), must fit the board regions that hold them (memory.sram_pools,
# memory.ddr_pools, memory.program of the board file, which may name one region more than
# once). Fails with one line naming the region, what it would hold, both sizes and what to
# change. The rest of a region (.data, .bss, the stack, the virtual NPU's work memory) is
# the linker's to check: its error names the region too ("region `X' overflowed by N bytes").
#
#   cmake -DMEMORY_HEADER=<name>_memory.h -DEMBEDDED=<file>|<file>... [-DEXTRA_DDR_BYTES=n]
#         -DBOARD_NAME=.. -DBOARD_FILE=.. -D{SRAM_POOLS,DDR_POOLS,PROGRAM}_REGION{,_ORIGIN,_BYTES}=..
#         -DSTAMP=<file> -P check_memory_fit.cmake
# (the board arguments come from kiln_board_fit_check_arguments(), board_profile.cmake).
cmake_minimum_required(VERSION 3.25)

file(READ "${MEMORY_HEADER}" _header)
foreach(_macro PROGRAM SRAM DDR)
  if(NOT _header MATCHES "#define KILN_MANIFEST_${_macro}_BYTES ([0-9]+)")
    message(FATAL_ERROR "${MEMORY_HEADER} has no KILN_MANIFEST_${_macro}_BYTES: write it again with kiln.memory.manifest")
  endif()
  set(_manifest_${_macro} "${CMAKE_MATCH_1}")
endforeach()
if(_header MATCHES "#define KILN_MANIFEST_PROGRAM \"([^\"]*)\"")
  set(_program_name "${CMAKE_MATCH_1}")
endif()

# The embedded files, as kiln_add_firmware's assembly lays them out (.balign 32 each).
string(REPLACE "|" ";" _embedded "${EMBEDDED}")
set(_embedded_bytes 0)
foreach(_file IN LISTS _embedded)
  file(SIZE "${_file}" _size)
  math(EXPR _embedded_bytes "${_embedded_bytes} + (${_size} + 31) / 32 * 32")
endforeach()
if(NOT EXTRA_DDR_BYTES)
  set(EXTRA_DDR_BYTES 0)
endif()
math(EXPR _ddr_pools "${_manifest_DDR} + ${EXTRA_DDR_BYTES}")

# What each region would hold (what is empty is not listed; a region is listed once).
set(_regions "")
macro(_kiln_fit_add place bytes what)
  set(_region "${${place}_REGION}")
  if(NOT _region IN_LIST _regions)
    list(APPEND _regions "${_region}")
    set(_needed_${_region} 0)
    set(_holds_${_region} "")
    set(_places_${_region} "")
  endif()
  if(${bytes} GREATER 0)
    math(EXPR _needed_${_region} "${_needed_${_region}} + ${bytes}")
    list(APPEND _holds_${_region} "${what} (${bytes} bytes)")
    list(APPEND _places_${_region} "${place}")
  endif()
endmacro()
_kiln_fit_add(SRAM_POOLS "${_manifest_SRAM}" "the pools placed in \"SRAM\"")
set(_ddr_what "the pools placed in \"DDR\"")
if(EXTRA_DDR_BYTES GREATER 0)
  set(_ddr_what "the pools placed in \"DDR\" and the ETDump buffer")
endif()
_kiln_fit_add(DDR_POOLS "${_ddr_pools}" "${_ddr_what}")
_kiln_fit_add(PROGRAM "${_embedded_bytes}" "the embedded program and its inputs")

foreach(_region IN LISTS _regions)
  foreach(_place SRAM_POOLS DDR_POOLS PROGRAM)
    if(${_place}_REGION STREQUAL _region)
      set(_has "${${_place}_REGION_BYTES}")
      set(_origin "${${_place}_REGION_ORIGIN}")
    endif()
  endforeach()
  if(_needed_${_region} GREATER _has)
    math(EXPR _over "${_needed_${_region}} - ${_has}")
    list(JOIN _holds_${_region} " + " _holds)
    # What can be done, for what this region holds.
    set(_remedies "give the region more memory in the board file (${BOARD_FILE})")
    if("PROGRAM" IN_LIST _places_${_region})
      list(APPEND _remedies "put the program in another region (memory.program)")
    endif()
    if("DDR_POOLS" IN_LIST _places_${_region})
      list(APPEND _remedies "put the pools placed in \"DDR\" in another region (memory.ddr_pools)")
    endif()
    if("SRAM_POOLS" IN_LIST _places_${_region})
      list(APPEND _remedies
           "move pools from \"SRAM\" to \"DDR\" with a smaller SRAM budget (python -m kiln.memory.manifest --sram-bytes N)")
    endif()
    list(POP_BACK _remedies _last)
    list(JOIN _remedies ", " _remedies)
    if(_remedies)
      set(_remedies "${_remedies} or ${_last}")
    else()
      set(_remedies "${_last}")
    endif()
    # One line, as it is (FATAL_ERROR would wrap it): build logs and kiln-deploy show it whole.
    message(NOTICE
      "error: the program ${_program_name} does not fit board ${BOARD_NAME}: region ${_region} (at ${_origin}) "
      "has ${_has} bytes, but would hold ${_holds}: ${_needed_${_region}} bytes, ${_over} too many. To fix it: "
      "${_remedies}.")
    message(FATAL_ERROR "the program does not fit the board (the error above)")
  endif()
endforeach()
file(WRITE "${STAMP}" "${BOARD_NAME}: fits\n")
