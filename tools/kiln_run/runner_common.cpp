#include "tools/kiln_run/runner_common.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "tools/kiln_run/printable.h"
#include "tools/kiln_run/runner_options.h"

namespace kiln::host {

void capture_log(LogLevel level, const char* message, size_t length, void* user) {
  auto* capture = static_cast<LogCapture*>(user);
  if (level >= LogLevel::Error) {
    // Messages quote names from the program: kept escaped.
    capture->errors.push_back(printable(message, length));
  } else if (capture->verbose) {
    std::fprintf(stderr, "kiln: %s\n", printable(message, length).c_str());
  }
}

int report_failure(const LogCapture& capture, Error error, const std::string& while_doing) {
  for (size_t i = 0; i + 1 < capture.errors.size(); ++i) {
    std::fprintf(stderr, "kiln: %s\n", capture.errors[i].c_str());
  }
  const char* reason = capture.errors.empty() ? "(no log message)" : capture.errors.back().c_str();
  std::fprintf(stderr, "error: %s (0x%02" PRIx32 "): %s\n", error_name(error),
               static_cast<uint32_t>(error), reason);
  if (!while_doing.empty()) std::fprintf(stderr, "  while %s\n", printable(while_doing).c_str());
  return kExitRuntimeError;
}

Result<std::string> choose_method(const Program& program, const std::string& requested) {
  if (!requested.empty()) return requested;
  std::string first;
  for (size_t i = 0; i < program.num_methods(); ++i) {
    Result<const char*> name = program.get_method_name(i);
    if (!name.ok()) return name.error();
    if (i == 0) first = *name;
    if (std::strcmp(*name, "forward") == 0) return std::string("forward");
  }
  if (first.empty()) {
    KILN_LOG(Error, "the program has no methods");
    return Error::InvalidProgram;
  }
  return first;
}

}  // namespace kiln::host
