// The firmware's bundled-program mode (kiln-deploy --bundleio): when the embedded file is
// a bundled program (.bpte), every test case runs and its outputs are checked on the
// device against the expected ones, printing PASS/FAIL per case with the error per output
// and "Test_result: PASS" or "Test_result: FAIL" at the end.
#pragma once

#include "runtime/bundled_program/bundled_program.h"
#include "runtime/executor/method.h"

namespace kiln::firmware {

/// Runs every test case of `method_name`; returns the exit status (board.h): OK when all
/// pass, OUTPUT_MISMATCH when one fails, RUNTIME_ERROR when the runtime reports an error.
int run_bundled_test_cases(Method& method, const BundledProgram& bundle, const char* method_name);

}  // namespace kiln::firmware
