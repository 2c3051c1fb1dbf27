// Time from the SSE-300 system counter: 64 bits at the board file's timer.hz (32 MHz on
// the mps3-an547), no interrupts to count wrap-arounds. QEMU has no cycle counter (no DWT);
// with `-icount shift=0` every instruction takes one virtual nanosecond, so the counter
// measures instructions deterministically (at 32 MHz one tick = 31.25 instructions).
#include "board.h"

typedef struct {
  volatile uint32_t control;  /// CNTCR, bit 0 = enable
} CounterControl;

typedef struct {
  volatile uint32_t count_low;   /// CNTCV[31:0]
  volatile uint32_t count_high;  /// CNTCV[63:32]
} CounterRead;

#define COUNTER_CONTROL ((CounterControl*)KILN_BOARD_SYSCOUNTER_CONTROL_BASE)
#define COUNTER_READ ((CounterRead*)KILN_BOARD_SYSCOUNTER_READ_BASE)

static uint64_t g_start_ticks;

static uint64_t read_counter(void) {
  // Read high, low, high again: the low word may wrap between the two reads.
  uint32_t high, low;
  do {
    high = COUNTER_READ->count_high;
    low = COUNTER_READ->count_low;
  } while (high != COUNTER_READ->count_high);
  return ((uint64_t)high << 32) | low;
}

void board_counter_init(void) {
  COUNTER_CONTROL->control |= 1u;
  g_start_ticks = read_counter();
}

uint64_t board_ticks(void) { return read_counter() - g_start_ticks; }

uint32_t board_tick_hz(void) { return KILN_BOARD_TIMER_HZ; }
