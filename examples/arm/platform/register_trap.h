// A device model behind a register window, reached the way hardware is: with ordinary
// loads and stores at the device's base address.
//
// Why the MPU: QEMU's mps3-an547 maps the Corstone-300's NPU window as RAZ/WI (reads zero,
// ignores writes, no bus error), so nothing in the address map tells the firmware that a
// register was touched. The Armv8-M MPU can: it is enabled with PRIVDEFENA=0 (no background
// map) and regions covering the whole default memory map with its usual attributes except
// the register window, so every access there takes a MemManage fault. The handler decodes
// the faulting instruction (thumb_load_store.h: a word LDR or STR, which is what a
// driver's volatile 32-bit accesses compile to), performs the access on the model, writes
// a loaded value into the stacked (or live, r4-r11) register and steps the PC past the
// instruction. The driver's code is the silicon build's: only the board (its device model)
// installs the trap.
//
// Requirements: an Armv8-M core with an MPU of at least 8 regions, a firmware that runs
// privileged (Kiln's does) and that never touches the window with interrupts masked by
// PRIMASK (a MemManage fault there escalates to HardFault; the NPU wait hook masks only
// around WFI). MemManage gets the highest configurable priority, so that an interrupt
// handler (the NPU's) may read the registers too.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The model's side of the window: 32-bit accesses at byte offsets from its base.
/// Return 0 when the access was done, nonzero when the model refuses the offset.
typedef int (*register_trap_read)(void* context, uint32_t offset, uint32_t* value);
typedef int (*register_trap_write)(void* context, uint32_t offset, uint32_t value);

/// Makes [base, base + bytes) a trapped register window served by `read` / `write`
/// (base and bytes multiples of 32; the window inside one default memory region), then
/// enables the MPU. Returns 0, or -1 (after printing why) when the core cannot: no MPU or
/// too few regions, a window that is not aligned.
int register_trap_install(uintptr_t base, uint32_t bytes, register_trap_read read,
                          register_trap_write write, void* context);

/// Accesses the trap served so far (loads, stores).
uint64_t register_trap_accesses(void);

#ifdef __cplusplus
}  // extern "C"
#endif
