// What kiln-run's two modes (a program, a bundled program) share: capturing the
// runtime's log so that a failure can quote its reason, and choosing the method to run.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/core/result.h"
#include "runtime/executor/program.h"
#include "runtime/platform/log.h"

namespace kiln::host {

struct LogCapture {
  bool verbose = false;
  std::vector<std::string> errors;  // Error/Fatal messages since the last clear
};

/// The runtime's log sink: keeps errors (escaped), prints info lines with --verbose.
void capture_log(LogLevel level, const char* message, size_t length, void* user);

/// Prints the earlier error messages as context and the last one on the error line;
/// returns kExitRuntimeError.
int report_failure(const LogCapture& capture, Error error, const std::string& while_doing);

/// Chooses `requested`, else "forward", else the program's first method.
Result<std::string> choose_method(const Program& program, const std::string& requested);

}  // namespace kiln::host
