// Formats log messages on the stack (no heap) and routes them to a sink or the PAL.
#include "runtime/platform/log.h"

#include <cstdarg>
#include <cstdio>

#include "runtime/platform/platform.h"

namespace kiln {
namespace {

/// Longer messages are cut, ending in "...", rather than allocated.
constexpr size_t kMaxMessageLength = 256;

LogSink g_sink = nullptr;
void* g_sink_user = nullptr;

}  // namespace

void set_log_sink(LogSink sink, void* user) {
  g_sink = sink;
  g_sink_user = user;
}

void log_message(LogLevel level, const char* file, int line, const char* format, ...) {
  char message[kMaxMessageLength];
  va_list args;
  va_start(args, format);
  const int written = vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  size_t length = 0;
  if (written > 0) {
    length = static_cast<size_t>(written);
    if (length >= sizeof(message)) {
      length = sizeof(message) - 1;
      message[length - 3] = '.';
      message[length - 2] = '.';
      message[length - 1] = '.';
    }
  }
  message[length] = '\0';
  if (g_sink != nullptr) {
    g_sink(level, message, length, g_sink_user);
  } else {
    kiln_pal_emit_log_message(static_cast<int>(level), file, line, message, length);
  }
}

}  // namespace kiln
