// Logging: printf-style messages routed to the platform (PAL) or a user sink.
#pragma once

#include <cstddef>

namespace kiln {

enum class LogLevel : int {
  /// Verbose detail for debugging the runtime.
  Debug = 0,
  /// Normal progress messages.
  Info = 1,
  /// An operation failed; the message says why, with numbers.
  Error = 2,
  /// The runtime cannot continue.
  Fatal = 3,
};

/// Formats the message and hands it to the sink (or the PAL when no sink is set).
void log_message(LogLevel level, const char* file, int line, const char* format, ...)
    __attribute__((format(printf, 4, 5)));

/// Receives every formatted message; `user` is the pointer given to set_log_sink.
using LogSink = void (*)(LogLevel level, const char* message, size_t length, void* user);

/// Routes messages to `sink` instead of the PAL; nullptr restores the PAL.
void set_log_sink(LogSink sink, void* user);

}  // namespace kiln

#ifndef KILN_MIN_LOG_LEVEL
#define KILN_MIN_LOG_LEVEL 1
#endif

/// KILN_LOG(Error, "asked for %zu bytes", n);
#define KILN_LOG(level, ...)                                                                \
  do {                                                                                      \
    if (static_cast<int>(::kiln::LogLevel::level) >= KILN_MIN_LOG_LEVEL) {                  \
      ::kiln::log_message(::kiln::LogLevel::level, __FILE__, __LINE__, __VA_ARGS__);        \
    }                                                                                       \
  } while (0)
