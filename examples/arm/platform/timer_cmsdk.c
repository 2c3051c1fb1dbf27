// Time from a CMSDK APB timer, for boards without the SSE-300's system counter (the
// MPS2 images): a 32-bit down-counter at the board's timer clock, reloaded from
// 0xFFFFFFFF. No interrupt counts wrap-arounds, so a measured span must stay under
// 2^32 ticks (171 s of virtual time at 25 MHz: with `-icount shift=0`, 171 G
// instructions). Same interface as system_counter.c.
#include "board.h"

typedef struct {
  volatile uint32_t control;  /// 0x00: bit 0 = enable
  volatile uint32_t value;    /// 0x04: current count (counts down)
  volatile uint32_t reload;   /// 0x08: value loaded when the count reaches zero
} CmsdkTimer;

#define TIMER0 ((CmsdkTimer*)KILN_BOARD_TIMER_BASE)

static uint32_t g_start_value;

void board_counter_init(void) {
  TIMER0->control = 0u;
  TIMER0->reload = 0xFFFFFFFFu;
  TIMER0->value = 0xFFFFFFFFu;
  TIMER0->control = 1u;
  g_start_value = TIMER0->value;
}

uint64_t board_ticks(void) { return (uint64_t)(uint32_t)(g_start_value - TIMER0->value); }

uint32_t board_tick_hz(void) { return KILN_BOARD_TIMER_HZ; }
