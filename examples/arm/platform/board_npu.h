// The board's side of the NPU, for the register-level Ethos-U driver: its interrupt
// (routed to a handler, enabled in the NVIC), the wait for it (WFI without missing it),
// data-cache maintenance over what the NPU reads and writes, and the board's start hook.
// The same code runs on silicon and on QEMU: where the board file says the NPU is a
// device model ("device": "model"), board_npu_start() plugs Kiln's virtual NPU in behind
// the register window (npu_device_model.cpp) before the driver first touches it.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Brings the NPU up before its driver initializes it: nothing on silicon (clocks and
/// power are on after reset on the boards Kiln knows); the device model and its register
/// trap where the board has one. Returns 0, or -1 after printing why.
int board_npu_start(void);

/// Routes the NPU's interrupt (KILN_BOARD_NPU_IRQ) to handler(context) and enables it in
/// the NVIC, below MemManage's priority (a trapped register access in the handler must
/// preempt it).
void board_npu_set_irq_handler(void (*handler)(void* context), void* context);

/// The driver's wait hook (ethos_u_driver_config.h WaitHook): masks interrupts, sleeps in
/// WFI unless *irq_seen (an interrupt that came after the check still wakes WFI), unmasks
/// — the handler then runs. A SysTick wake-up within 1 ms bounds each sleep, so that the
/// driver's timeout is noticed when the interrupt never comes.
void board_npu_wait_for_interrupt(void* context, const volatile bool* irq_seen);

/// Data-cache maintenance by address over [data, data + bytes) (whole 32-byte lines):
/// clean before the NPU reads what the CPU wrote, clean and invalidate before the CPU
/// reads what the NPU wrote. No-ops on a core without a D-cache.
void board_dcache_clean(const void* data, size_t bytes);
void board_dcache_invalidate(const void* data, size_t bytes);

#ifdef __cplusplus
}  // extern "C"
#endif
