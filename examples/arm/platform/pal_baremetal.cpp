// Kiln's platform layer (PAL) on the board: log lines to the UART, time from the
// system counter, abort through semihosting. These strong definitions replace the
// runtime's weak defaults (KILN_PAL=minimal) at link time.
#include "examples/arm/platform/board.h"
#include "runtime/platform/platform.h"

extern "C" {

void kiln_pal_init(void) {}

void kiln_pal_emit_log_message(int level, const char* file, int line, const char* message,
                               size_t length) {
  static const char kLevelLetters[] = {'D', 'I', 'E', 'F'};
  const char letter = (level >= 0 && level < 4) ? kLevelLetters[level] : '?';
  // The file name only: build paths say nothing to the reader.
  const char* name = file != nullptr ? file : "?";
  for (const char* p = name; *p != '\0'; ++p) {
    if (*p == '/') name = p + 1;
  }
  board_printf("[kiln %c %s:%d] ", letter, name, line);
  board_uart_write(message, length);
  board_uart_write("\n", 1);
}

uint64_t kiln_pal_current_ticks(void) { return board_ticks(); }

/// One tick is 1e9 / hz nanoseconds (31.25 ns at 32 MHz).
void kiln_pal_ticks_to_ns(uint64_t* numerator, uint64_t* denominator) {
  *numerator = 1000000000ull;
  *denominator = board_tick_hz();
}

void kiln_pal_abort(void) {
  board_uart_puts("\n*** kiln_pal_abort\n");
  board_exit(KILN_EXIT_ABORT);
}

}  // extern "C"
