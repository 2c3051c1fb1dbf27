# Runs one firmware in QEMU and passes when its exit status is the expected one.
#   cmake -DQEMU=<qemu-system-arm> -DMACHINE=mps3-an547 -DELF=<fw.elf>
#         [-DEXPECTED_EXIT=0] [-DTIMEOUT=60] -P run_firmware.cmake
# The firmware's exit status is what its semihosting SYS_EXIT_EXTENDED call passed
# (examples/arm/platform/board.h); the verdict never depends on the log's text. A run
# that exceeds TIMEOUT seconds fails and says so.
if(NOT DEFINED EXPECTED_EXIT)
  set(EXPECTED_EXIT 0)
endif()
if(NOT DEFINED TIMEOUT)
  set(TIMEOUT 60)
endif()
execute_process(
  COMMAND "${QEMU}" -machine "${MACHINE}" -nographic -monitor none -serial stdio
          -semihosting-config enable=on,target=native -icount shift=0 -kernel "${ELF}"
  TIMEOUT ${TIMEOUT}
  RESULT_VARIABLE status)
if(status MATCHES "timeout")
  message(FATAL_ERROR "QEMU did not finish within ${TIMEOUT} s: ${ELF} hangs or is too slow")
endif()
if(NOT status STREQUAL "${EXPECTED_EXIT}")
  message(FATAL_ERROR "firmware ${ELF} exited with ${status}; expected ${EXPECTED_EXIT} "
                      "(0 ok, 1 runtime error, 2 outputs differ from the host runtime, 3 fault, 4 abort)")
endif()
message(STATUS "firmware exited with ${status} as expected")
