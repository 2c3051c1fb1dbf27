// The board's NPU support (board_npu.h): NVIC routing, the race-free wait, cache hooks.
#include "board_npu.h"

#include "board.h"

#define NVIC_ISER ((volatile uint32_t*)0xE000E100u)
#define NVIC_IPR ((volatile uint8_t*)0xE000E400u)
#define SYST_CSR (*(volatile uint32_t*)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018u)
/// SysTick CSR: ENABLE, TICKINT, CLKSOURCE = the processor clock.
#define SYST_ENABLE_TICK_CPU 0x7u
/// Cache maintenance by address (Armv8-M / Armv7-M SCB): clean, clean and invalidate.
/// Invalidation cleans too: a region's first and last lines may hold bytes of the CPU's
/// neighbouring data, which a plain invalidate would lose (the lines the NPU wrote were
/// cleaned before it started and the CPU did not write them since: nothing is lost).
#define SCB_DCCMVAC (*(volatile uint32_t*)0xE000EF68u)
#define SCB_DCCIMVAC (*(volatile uint32_t*)0xE000EF70u)
#define CACHE_LINE 32u
/// The NPU interrupt's priority: below MemManage (0), which a device model's register
/// trap uses (register_trap.h).
#define NPU_IRQ_PRIORITY 0x80u

static void (*volatile g_handler)(void*);
static void* volatile g_context;

__attribute__((weak)) int board_npu_start(void) { return 0; }

void board_npu_set_irq_handler(void (*handler)(void* context), void* context) {
  g_context = context;
  g_handler = handler;
  NVIC_IPR[KILN_BOARD_NPU_IRQ] = NPU_IRQ_PRIORITY;
  NVIC_ISER[KILN_BOARD_NPU_IRQ / 32] = 1u << (KILN_BOARD_NPU_IRQ % 32);
}

/// The vector of KILN_BOARD_NPU_IRQ (startup.c).
void kiln_npu_irq_handler(void) {
  void (*handler)(void*) = g_handler;
  if (handler != 0) handler(g_context);
}

/// The wait's wake-up tick: one shot, disarmed when it fires.
void kiln_systick_handler(void) { SYST_CSR = 0; }

void board_npu_wait_for_interrupt(void* context, const volatile bool* irq_seen) {
  (void)context;
  if ((SYST_CSR & 1u) == 0) {
    SYST_RVR = KILN_BOARD_CPU_CLOCK_HZ / 1000u;  // 1 ms
    SYST_CVR = 0;
    SYST_CSR = SYST_ENABLE_TICK_CPU;
  }
  // With PRIMASK set a pending interrupt still ends WFI, but is taken only after cpsie:
  // an interrupt between the check and WFI cannot be lost.
  __asm__ volatile("cpsid i" ::: "memory");
  if (!*irq_seen) __asm__ volatile("dsb\nwfi" ::: "memory");
  __asm__ volatile("cpsie i\nisb" ::: "memory");
}

#if KILN_BOARD_DCACHE_PRESENT
static void by_line(volatile uint32_t* operation, const void* data, size_t bytes) {
  uintptr_t address = (uintptr_t)data & ~(uintptr_t)(CACHE_LINE - 1u);
  const uintptr_t end = (uintptr_t)data + bytes;
  __asm__ volatile("dsb" ::: "memory");
  for (; address < end; address += CACHE_LINE) *operation = (uint32_t)address;
  __asm__ volatile("dsb\nisb" ::: "memory");
}

void board_dcache_clean(const void* data, size_t bytes) { by_line(&SCB_DCCMVAC, data, bytes); }
void board_dcache_invalidate(const void* data, size_t bytes) { by_line(&SCB_DCCIMVAC, data, bytes); }
#else
void board_dcache_clean(const void* data, size_t bytes) {
  (void)data;
  (void)bytes;
}
void board_dcache_invalidate(const void* data, size_t bytes) {
  (void)data;
  (void)bytes;
}
#endif
