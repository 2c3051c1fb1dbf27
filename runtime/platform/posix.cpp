// The PAL for hosted systems: stderr, the monotonic clock, abort().
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "runtime/platform/platform.h"

extern "C" {

void kiln_pal_init(void) {}

void kiln_pal_emit_log_message(int level, const char* file, int line, const char* message,
                               size_t length) {
  static const char kLevelLetters[] = {'D', 'I', 'E', 'F'};
  const char letter = (level >= 0 && level < 4) ? kLevelLetters[level] : '?';
  // Only the file name: build paths are long and say nothing to the reader.
  const char* slash = file != nullptr ? std::strrchr(file, '/') : nullptr;
  const char* name = slash != nullptr ? slash + 1 : (file != nullptr ? file : "?");
  std::fprintf(stderr, "[kiln %c %s:%d] %.*s\n", letter, name, line, static_cast<int>(length),
               message);
}

uint64_t kiln_pal_current_ticks(void) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

/// Ticks are nanoseconds.
void kiln_pal_ticks_to_ns(uint64_t* numerator, uint64_t* denominator) {
  *numerator = 1;
  *denominator = 1;
}

void kiln_pal_abort(void) { std::abort(); }

}  // extern "C"
