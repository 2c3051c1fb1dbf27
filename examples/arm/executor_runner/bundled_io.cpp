#include "examples/arm/executor_runner/bundled_io.h"

#include "examples/arm/executor_runner/firmware_options.h"
#include "examples/arm/platform/board.h"
#include "runtime/platform/log.h"

namespace kiln::firmware {
namespace {

constexpr size_t kMaxCheckedOutputs = 16;

/// "%g" is not in every embedded printf: the error as a mantissa and a power of ten.
void print_error(double value) {
  int exponent = 0;
  while (value >= 10.0 && exponent < 300) { value /= 10.0; ++exponent; }
  while (value > 0.0 && value < 1.0 && exponent > -300) { value *= 10.0; --exponent; }
  board_printf("%d.%03de%d", static_cast<int>(value), static_cast<int>((value - static_cast<int>(value)) * 1000.0),
               exponent);
}

}  // namespace

int run_bundled_test_cases(Method& method, const BundledProgram& bundle, const char* method_name) {
  static BundledInputs inputs;
  const FirmwareOptions& options = firmware_options();
  const size_t cases = bundle.num_test_cases(method_name);
  board_printf("I [runner] bundled program: %zu test case(s) for '%s'\n", cases, method_name);
  if (cases == 0) {
    KILN_LOG(Error, "the bundle has no test cases for method '%s'", method_name);
    return KILN_EXIT_RUNTIME_ERROR;
  }
  BundledOutputCheck checks[kMaxCheckedOutputs];
  size_t failed = 0;
  for (size_t c = 0; c < cases; ++c) {
    Error error = bundle.set_inputs(method, method_name, c, inputs);
    if (error == Error::Ok) error = method.execute();
    if (error != Error::Ok) {
      board_printf("E [runner] test case %zu: %s (0x%02lx)\n", c, error_name(error), static_cast<unsigned long>(error));
      return KILN_EXIT_RUNTIME_ERROR;
    }
    error = bundle.verify_outputs(method, method_name, c, options.bundle_rtol, options.bundle_atol,
                                  {checks, kMaxCheckedOutputs});
    if (error != Error::Ok && error != Error::BundledProgramOutputMismatch) {
      board_printf("E [runner] test case %zu: %s\n", c, error_name(error));
      return KILN_EXIT_RUNTIME_ERROR;
    }
    failed += error == Error::Ok ? 0 : 1;
    board_printf("I [runner] test case %zu: %s\n", c, error == Error::Ok ? "PASS" : "FAIL");
    for (size_t i = 0; i < method.outputs_size() && i < kMaxCheckedOutputs; ++i) {
      board_printf("I [runner]   output %zu: max |error| ", i);
      print_error(checks[i].max_abs_error);
      board_printf(", %zu of %zu elements beyond tolerance\n", checks[i].mismatches, checks[i].numel);
    }
  }
  if (failed > 0) {
    board_printf("Test_result: FAIL (%zu of %zu test case(s) failed)\n", failed, cases);
    return KILN_EXIT_OUTPUT_MISMATCH;
  }
  board_printf("Test_result: PASS (%zu test case(s))\n", cases);
  return KILN_EXIT_OK;
}

}  // namespace kiln::firmware
