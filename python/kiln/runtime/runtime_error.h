// How the runtime's failures reach Python, for every part of the kiln._runtime extension:
// the runtime's log is kept per thread (so that an error quotes the messages of its own
// call, also when Python threads run methods at once), and a kiln::Error becomes
// kiln.runtime.KilnRuntimeError with the error's name, code, logged reasons and context.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/core/result.h"
#include "runtime/platform/log.h"

namespace kiln::python {

struct LogRecord {
  int level;
  std::string message;
};

/// The runtime's log sink: keeps the calling thread's messages (at most 256).
void log_to_thread_buffer(LogLevel level, const char* message, size_t length, void* user);

/// The calling thread's messages since the last take.
std::vector<LogRecord> take_thread_log();

/// Raises KilnRuntimeError for `error`, quoting the calling thread's Error/Fatal log
/// messages; `context` says what was being done ("loading method 'forward'").
[[noreturn]] void raise(Error error, std::string context);

inline void check(Error error, const std::string& context) {
  if (error != Error::Ok) raise(error, context);
}

template <typename T>
T take_or_raise(Result<T>&& result, const std::string& context) {
  if (!result.ok()) raise(result.error(), context);
  return std::move(*result);
}

/// Text from the program or the log as a Python str. Bytes that are not UTF-8 (a
/// corrupted program, a message cut inside a character) are replaced, not raised.
nanobind::str text(const char* data, size_t size);
nanobind::str text(const std::string& value);

/// Installs the sink and the translator of raise()'s exception into KilnRuntimeError.
void register_runtime_errors();

}  // namespace kiln::python
