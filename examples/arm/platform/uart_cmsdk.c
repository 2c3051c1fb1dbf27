// UART0 of the Corstone-300: an Arm CMSDK APB UART. QEMU prints what it transmits on
// its stdout with -nographic.
#include <stdarg.h>
#include <stdio.h>

#include "board.h"

typedef struct {
  volatile uint32_t data;     /// 0x00: write a byte to transmit
  volatile uint32_t state;    /// 0x04: bit 0 = transmit buffer full
  volatile uint32_t control;  /// 0x08: bit 0 = transmit enable
  volatile uint32_t interrupt_status;
  volatile uint32_t baud_divider;  /// 0x10: at least 16
} CmsdkUart;

#define UART0 ((CmsdkUart*)KILN_BOARD_UART0_BASE)

void board_uart_init(void) {
  UART0->baud_divider = 16;
  UART0->control = 1u;
}

static void uart_put(char c) {
  while ((UART0->state & 1u) != 0u) {
  }
  UART0->data = (uint32_t)(unsigned char)c;
}

void board_uart_write(const char* data, size_t length) {
  for (size_t i = 0; i < length; ++i) uart_put(data[i]);
}

void board_uart_puts(const char* text) {
  while (*text != '\0') uart_put(*text++);
}

void board_printf(const char* format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  int written = vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  if (written < 0) return;
  size_t length = (size_t)written < sizeof(line) ? (size_t)written : sizeof(line) - 1;
  board_uart_write(line, length);
}
