// The board support Kiln firmware needs: a UART for the log, a tick counter, an exit
// that hands the program's status to the host (semihosting), and a fault report that
// names the operator that was running. Addresses come from the board file as compile
// definitions (KILN_BOARD_*: examples/arm/platform/board_profile.cmake).
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Exit statuses of Kiln firmware (QEMU's exit code through SYS_EXIT_EXTENDED).
enum kiln_exit_status {
  /// The program ran and its outputs are as expected.
  KILN_EXIT_OK = 0,
  /// The runtime reported an Error (the log names it).
  KILN_EXIT_RUNTIME_ERROR = 1,
  /// The outputs differ from the expected outputs embedded at build time.
  KILN_EXIT_OUTPUT_MISMATCH = 2,
  /// A processor fault (HardFault, stack overflow, bad memory access).
  KILN_EXIT_FAULT = 3,
  /// kiln_pal_abort(), a pure virtual call or another state with no Error to return.
  KILN_EXIT_ABORT = 4,
};

/// Enables the UART and starts the system counter. Called by the startup code before main.
void board_init(void);

/// Writes `length` bytes to UART0 (blocking).
void board_uart_write(const char* data, size_t length);
/// Writes a NUL-terminated string to UART0.
void board_uart_puts(const char* text);
/// printf to UART0 (formatted on the stack; lines longer than 255 bytes are cut).
void board_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));

/// Ticks of the 64-bit system counter since board_init().
uint64_t board_ticks(void);
/// Ticks per second of board_ticks().
uint32_t board_tick_hz(void);

/// Writes `size` bytes to the file `path` on the host (semihosting SYS_OPEN "wb",
/// SYS_WRITE, SYS_CLOSE; QEMU resolves a relative path against its working directory).
/// Returns 0 on success, -1 when the host refuses (no semihosting, no such folder).
int board_write_host_file(const char* path, const void* data, size_t size);

/// Ends the program: QEMU exits with `status` (semihosting SYS_EXIT_EXTENDED).
__attribute__((noreturn)) void board_exit(int status);

/// Names what is running now ("Method init", ...), for fault reports. `name` must stay
/// valid; nullptr clears it. Replaces any describer set below.
void board_set_activity(const char* name);

/// Writes a description of what is running into `buffer` (NUL-terminated).
typedef void (*board_activity_describer)(void* context, char* buffer, size_t size);
/// Like board_set_activity, but the text is only produced if a fault needs it: cheap
/// enough to call between every two operators.
void board_set_activity_describer(board_activity_describer describe, void* context);

#ifdef __cplusplus
}  // extern "C"
#endif
