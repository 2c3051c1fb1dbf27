# Builds one target and passes only if the build fails with the expected message:
#   cmake -DBUILD_DIR=<dir> -DTARGET=<target> -DEXPECTED_MESSAGE=<regex> [-DWHY=<reason>]
#         -P expect_build_failure.cmake
# For firmware that must not build: a program that does not fit the board (an error naming
# the sizes), or that needs a kernel no library has (naming the operator, dtype, program).
execute_process(
  COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}"
  RESULT_VARIABLE status
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
if(status EQUAL 0)
  message(FATAL_ERROR "building ${TARGET} succeeded; it must fail (${WHY})")
endif()
if(NOT output MATCHES "${EXPECTED_MESSAGE}")
  message(FATAL_ERROR "building ${TARGET} failed, but not with a message matching '${EXPECTED_MESSAGE}':\n${output}")
endif()
string(REGEX MATCH "${EXPECTED_MESSAGE}[^\n]*" reason "${output}")
message(STATUS "the build failed as expected: ${reason}")
