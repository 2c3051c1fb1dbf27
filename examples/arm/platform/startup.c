// Reset and fault handling for Kiln firmware on Cortex-M (v8-M and v7E-M).
//
// Reset: enable the FPU (and MVE on v8.1-M) in CPACR before any floating-point or
// vector instruction can run, set the stack limit (v8-M faults on overflow instead of
// corrupting memory), copy .data, zero .bss, run static constructors, board_init(),
// main(), and exit with main's status through semihosting.
// Faults: print the faulting address, the fault status registers and the activity
// (operator) that was running, then exit with KILN_EXIT_FAULT.
#include <stdint.h>
#include <string.h>

#include "board.h"

extern uint32_t __stack_top;
extern uint32_t __stack_limit;
extern uint8_t __data_start, __data_end, __data_load;
extern uint8_t __bss_start, __bss_end;
extern uint8_t __heap_start, __heap_end;
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);

int main(void);
void board_uart_init(void);
void board_counter_init(void);
void kiln_reset_handler(void);
void kiln_fault_handler(void);
void kiln_default_handler(void);
void kiln_memmanage_handler(void);
void kiln_systick_handler(void);
void kiln_npu_irq_handler(void);

// ---- system control block registers ----
#define SCB_CPACR (*(volatile uint32_t*)0xE000ED88u)
#define SCB_CFSR (*(volatile uint32_t*)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t*)0xE000ED2Cu)
#define SCB_MMFAR (*(volatile uint32_t*)0xE000ED34u)
#define SCB_BFAR (*(volatile uint32_t*)0xE000ED38u)
/// CFSR bits: MMFAR / BFAR hold a valid address.
#define CFSR_MMARVALID (1u << 7)
#define CFSR_BFARVALID (1u << 15)
/// CFSR bit: UsageFault STKOF (stack pointer went below its limit, v8-M).
#define CFSR_STKOF (1u << 20)

static const char* volatile g_activity;
static board_activity_describer volatile g_describer;
static void* volatile g_describer_context;

void board_set_activity(const char* name) {
  g_describer = 0;
  g_activity = name;
}

void board_set_activity_describer(board_activity_describer describe, void* context) {
  g_describer_context = context;
  g_describer = describe;
}

void board_init(void) {
  board_uart_init();
  board_counter_init();
}

// ---- reset ----

__attribute__((naked, noreturn)) void kiln_reset_handler(void) {
  __asm__ volatile(
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
      "ldr r0, =__stack_limit\n"
      "msr msplim, r0\n"
#endif
      // CPACR.CP10/CP11 = full access: FPU and (v8.1-M) MVE. Must precede any code
      // the compiler may have given an FP or vector instruction.
      "ldr r0, =0xE000ED88\n"
      "ldr r1, [r0]\n"
      "orr r1, r1, #(0xF << 20)\n"
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
      "b kiln_platform_start\n");
}

__attribute__((noreturn, used)) void kiln_platform_start(void) {
  memcpy(&__data_start, &__data_load, (size_t)(&__data_end - &__data_start));
  memset(&__bss_start, 0, (size_t)(&__bss_end - &__bss_start));
  for (void (**init)(void) = __init_array_start; init != __init_array_end; ++init) (*init)();
  board_init();
  board_exit(main());
}

// ---- faults ----

/// Registers the processor pushed on exception entry.
typedef struct {
  uint32_t r0, r1, r2, r3, r12, lr, pc, xpsr;
} ExceptionFrame;

__attribute__((noreturn, used)) void kiln_fault_report(const ExceptionFrame* frame,
                                                       uint32_t exc_return) {
  const uint32_t cfsr = SCB_CFSR;
  const char* activity = g_activity;
  char description[96];
  if (g_describer != 0) {
    g_describer(g_describer_context, description, sizeof(description));
    activity = description;
  }
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  board_printf("\n*** FAULT (exception %lu) at pc=0x%08lx lr=0x%08lx xpsr=0x%08lx\n",
               (unsigned long)(ipsr & 0x1ffu), (unsigned long)frame->pc,
               (unsigned long)frame->lr, (unsigned long)frame->xpsr);
  board_printf("*** CFSR=0x%08lx HFSR=0x%08lx EXC_RETURN=0x%08lx\n", (unsigned long)cfsr,
               (unsigned long)SCB_HFSR, (unsigned long)exc_return);
  if (cfsr & CFSR_MMARVALID) board_printf("*** faulting data address (MMFAR) 0x%08lx\n", (unsigned long)SCB_MMFAR);
  if (cfsr & CFSR_BFARVALID) board_printf("*** faulting data address (BFAR) 0x%08lx\n", (unsigned long)SCB_BFAR);
  if (cfsr & CFSR_STKOF) {
    board_printf("*** stack overflow: the stack limit (%lu bytes) was crossed\n",
                 (unsigned long)((uintptr_t)&__stack_top - (uintptr_t)&__stack_limit));
  }
  board_printf("*** while running: %s\n", activity != 0 ? activity : "(not inside the runtime)");
  board_exit(KILN_EXIT_FAULT);
}

// Finds the frame on the stack that was in use (MSP or PSP, EXC_RETURN bit 2). After a
// stack overflow the MSP is at its limit: move it so that the report can run.
__attribute__((naked, noreturn)) void kiln_fault_handler(void) {
  __asm__ volatile(
      "mov r1, lr\n"
      "tst lr, #4\n"
      "ite eq\n"
      "mrseq r0, msp\n"
      "mrsne r0, psp\n"
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
      // Near the limit (a stack overflow): the report needs a stack of its own.
      "ldr r2, =__stack_limit + 512\n"
      "cmp r0, r2\n"
      "bhs 1f\n"
      "ldr r2, =__stack_top\n"
      "msr msp, r2\n"
      "1:\n"
#endif
      "b kiln_fault_report\n");
}

__attribute__((noreturn)) void kiln_default_handler(void) {
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  board_printf("\n*** unexpected exception %lu\n", (unsigned long)(ipsr & 0x1ffu));
  board_exit(KILN_EXIT_FAULT);
}

// ---- newlib support: the heap (vsnprintf of floating-point values allocates) ----

void* _sbrk(ptrdiff_t increment) {
  static uint8_t* brk = &__heap_start;
  if (increment > 0 && (size_t)increment > (size_t)(&__heap_end - brk)) {
    board_uart_puts("\n*** newlib heap exhausted\n");
    return (void*)-1;
  }
  uint8_t* previous = brk;
  brk += increment;
  return previous;
}

// ---- handlers a board's devices may replace (weak: the default ones otherwise) ----

/// MemManage: a fault, unless a device model's register trap serves it (register_trap.c).
/// A branch, not a call: kiln_fault_handler reads EXC_RETURN from lr.
__attribute__((weak, naked)) void kiln_memmanage_handler(void) { __asm__ volatile("b kiln_fault_handler"); }
/// SysTick: unused unless the NPU's wait hook arms it as a wake-up (board_npu.c).
__attribute__((weak)) void kiln_systick_handler(void) { kiln_default_handler(); }
/// The NPU's interrupt (KILN_BOARD_NPU_IRQ), routed to its driver by board_npu.c.
__attribute__((weak)) void kiln_npu_irq_handler(void) { kiln_default_handler(); }

// ---- vector table (at 0x0: initial stack pointer, then the handlers) ----

typedef void (*Handler)(void);

// The system exceptions, then the external interrupts up to the NPU's (none without one).
#if KILN_BOARD_HAS_NPU
#define KILN_NUM_VECTORS (16 + KILN_BOARD_NPU_IRQ + 1)
#else
#define KILN_NUM_VECTORS 16
#endif

__attribute__((section(".vectors"), used)) const Handler kiln_vector_table[KILN_NUM_VECTORS] = {
    (Handler)&__stack_top,
    kiln_reset_handler,
    kiln_default_handler,  // NMI
    kiln_fault_handler,    // HardFault
    kiln_memmanage_handler,  // MemManage
    kiln_fault_handler,    // BusFault
    kiln_fault_handler,    // UsageFault
    kiln_fault_handler,    // SecureFault (v8-M)
    0,
    0,
    0,
    kiln_default_handler,  // SVCall
    kiln_default_handler,  // DebugMonitor
    0,
    kiln_default_handler,  // PendSV
    kiln_systick_handler,  // SysTick
#if KILN_BOARD_HAS_NPU
#if KILN_BOARD_NPU_IRQ > 0
    [16 ... 16 + KILN_BOARD_NPU_IRQ - 1] = kiln_default_handler,
#endif
    [16 + KILN_BOARD_NPU_IRQ] = kiln_npu_irq_handler,
#endif
};
