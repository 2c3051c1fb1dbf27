// Weak PAL defaults for builds without an operating system. Firmware provides strong
// definitions (UART output, a hardware timer) that replace these at link time.
#include "runtime/platform/platform.h"

extern "C" {

__attribute__((weak)) void kiln_pal_init(void) {}

/// No output device is known: messages are dropped (a log sink still gets them).
__attribute__((weak)) void kiln_pal_emit_log_message(int level, const char* file, int line,
                                                     const char* message, size_t length) {
  (void)level;
  (void)file;
  (void)line;
  (void)message;
  (void)length;
}

/// No timer is known: a counter keeps ticks monotonic, so durations are event counts.
__attribute__((weak)) uint64_t kiln_pal_current_ticks(void) {
  static uint64_t counter = 0;
  return ++counter;
}

__attribute__((weak)) void kiln_pal_ticks_to_ns(uint64_t* numerator, uint64_t* denominator) {
  *numerator = 1;
  *denominator = 1;
}

__attribute__((weak, noreturn)) void kiln_pal_abort(void) { __builtin_trap(); }

}  // extern "C"
