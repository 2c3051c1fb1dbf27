// The register trap (register_trap.h): an Armv8-M MPU map with a hole at the device's
// window, and the MemManage handler that turns each access into the hole into a call on
// the device model.
#include "register_trap.h"

#include <stddef.h>

#include "board.h"
#include "thumb_load_store.h"

// ---- System control block and MPU (Armv8-M, the security state the firmware runs in) ----
#define SCB_SHCSR (*(volatile uint32_t*)0xE000ED24u)
#define SCB_SHPR1 (*(volatile uint32_t*)0xE000ED18u)
#define SCB_CFSR (*(volatile uint32_t*)0xE000ED28u)
#define SCB_MMFAR (*(volatile uint32_t*)0xE000ED34u)
#define MPU_TYPE (*(volatile uint32_t*)0xE000ED90u)
#define MPU_CTRL (*(volatile uint32_t*)0xE000ED94u)
#define MPU_RNR (*(volatile uint32_t*)0xE000ED98u)
#define MPU_RBAR (*(volatile uint32_t*)0xE000ED9Cu)
#define MPU_RLAR (*(volatile uint32_t*)0xE000EDA0u)
#define MPU_MAIR0 (*(volatile uint32_t*)0xE000EDC0u)
/// SHCSR.MEMFAULTENA: MemManage faults are taken as themselves, not as HardFault.
#define SHCSR_MEMFAULTENA (1u << 16)
/// CFSR's MemManage part: a data access violation, with its address in MMFAR.
#define CFSR_DACCVIOL (1u << 1)
#define CFSR_MMARVALID (1u << 7)
#define CFSR_MMFSR_MASK 0xFFu

/// MAIR0 attributes: normal write-back, normal write-through (both read/write-allocate,
/// non-transient), Device-nGnRE — the attributes the default memory map gives.
enum { kAttrWriteBack = 0, kAttrWriteThrough = 1, kAttrDevice = 2 };
#define MAIR0_VALUE (0xFFu | (0xBBu << 8) | (0x04u << 16))
/// RBAR.AP = read/write at any privilege; RBAR.XN.
#define RBAR_AP_RW (1u << 1)
#define RBAR_XN 1u

/// The Armv8-M default memory map (what PRIVDEFENA=1 would give), which the MPU's regions
/// reproduce except for the window. Above 0xE0000000 is the PPB (always accessible) and
/// the vendor area Kiln's boards do not use.
typedef struct {
  uint32_t first, last;
  uint8_t attr, execute_never;
} MapSpan;
static const MapSpan kDefaultMap[] = {
    {0x00000000u, 0x1FFFFFFFu, kAttrWriteThrough, 0},  // code
    {0x20000000u, 0x3FFFFFFFu, kAttrWriteBack, 0},     // SRAM
    {0x40000000u, 0x5FFFFFFFu, kAttrDevice, 1},        // peripherals
    {0x60000000u, 0x7FFFFFFFu, kAttrWriteBack, 0},     // RAM
    {0x80000000u, 0x9FFFFFFFu, kAttrWriteThrough, 0},  // RAM
    {0xA0000000u, 0xDFFFFFFFu, kAttrDevice, 1},        // devices
};
#define NUM_SPANS (sizeof(kDefaultMap) / sizeof(kDefaultMap[0]))

typedef struct {
  uintptr_t base;
  uint32_t bytes;
  register_trap_read read;
  register_trap_write write;
  void* context;
  uint64_t accesses;
} Trap;
static Trap g_trap;

struct kiln_exception_frame;
/// startup.c: prints the fault and exits with KILN_EXIT_FAULT.
__attribute__((noreturn)) void kiln_fault_report(const struct kiln_exception_frame* frame, uint32_t exc_return);

uint64_t register_trap_accesses(void) { return g_trap.accesses; }

#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)

static void set_region(uint32_t number, uint32_t first, uint32_t last, const MapSpan* span) {
  MPU_RNR = number;
  MPU_RBAR = (first & ~0x1Fu) | RBAR_AP_RW | (span->execute_never ? RBAR_XN : 0u);
  MPU_RLAR = (last & ~0x1Fu) | ((uint32_t)span->attr << 1) | 1u;
}

int register_trap_install(uintptr_t base, uint32_t bytes, register_trap_read read,
                          register_trap_write write, void* context) {
  const uint32_t regions = (MPU_TYPE >> 8) & 0xFFu;
  const uint32_t last = (uint32_t)base + bytes - 1u;
  if (base % 32u != 0 || bytes == 0 || bytes % 32u != 0 || last < base) {
    board_printf("E [register trap] window 0x%08lx + %lu bytes: base and size must be multiples of 32\n",
                 (unsigned long)base, (unsigned long)bytes);
    return -1;
  }
  // The default map's spans and one hole: one span splits in two.
  if (regions < NUM_SPANS + 1u) {
    board_printf("E [register trap] the MPU has %lu regions; the trap needs %u\n", (unsigned long)regions,
                 (unsigned)(NUM_SPANS + 1u));
    return -1;
  }
  g_trap.base = base;
  g_trap.bytes = bytes;
  g_trap.read = read;
  g_trap.write = write;
  g_trap.context = context;
  g_trap.accesses = 0;

  MPU_CTRL = 0;
  __asm__ volatile("dsb\nisb" ::: "memory");
  MPU_MAIR0 = MAIR0_VALUE;
  uint32_t next = 0;
  int placed = 0;
  for (size_t i = 0; i < NUM_SPANS; ++i) {
    const MapSpan* span = &kDefaultMap[i];
    if (base < span->first || last > span->last) {
      set_region(next++, span->first, span->last, span);
      continue;
    }
    // The window's span: the parts before and after it, never overlapping it.
    if (base > span->first) set_region(next++, span->first, (uint32_t)base - 1u, span);
    if (last < span->last) set_region(next++, last + 1u, span->last, span);
    placed = 1;
  }
  if (!placed) {
    board_printf("E [register trap] window 0x%08lx-0x%08lx crosses a memory map boundary\n", (unsigned long)base,
                 (unsigned long)last);
    return -1;
  }
  for (; next < regions; ++next) {
    MPU_RNR = next;
    MPU_RLAR = 0;  // disabled
  }
  // MemManage: taken as itself, at the highest configurable priority (byte 0 of SHPR1).
  SCB_SHPR1 = SCB_SHPR1 & ~0xFFu;
  SCB_SHCSR |= SHCSR_MEMFAULTENA;
  // ENABLE; PRIVDEFENA = 0 (no background map: the hole faults); HFNMIENA = 0 (fault
  // handlers run on the default map).
  MPU_CTRL = 1u;
  __asm__ volatile("dsb\nisb" ::: "memory");
  return 0;
}

/// The register `n` of the interrupted code: r0-r3, r12 and lr in the exception frame,
/// r4-r11 where the handler pushed them.
static uint32_t* register_slot(uint32_t* frame, uint32_t* r4_r11, uint32_t n) {
  if (n <= 3u) return &frame[n];
  if (n <= 11u) return &r4_r11[n - 4u];
  if (n == 12u) return &frame[4];
  if (n == 14u) return &frame[5];
  return NULL;  // SP, PC: refused by the decoder
}

/// Called by the MemManage handler: frame = the stacked r0-r3, r12, lr, pc, xpsr;
/// r4_r11 = the live values the handler pushed (written back when it returns).
__attribute__((used)) void kiln_register_trap_fault(uint32_t* frame, uint32_t* r4_r11, uint32_t exc_return) {
  const uint32_t cfsr = SCB_CFSR;
  const uint32_t address = SCB_MMFAR;
  const int in_window = (cfsr & (CFSR_DACCVIOL | CFSR_MMARVALID)) == (CFSR_DACCVIOL | CFSR_MMARVALID) &&
                        g_trap.read != NULL && address >= g_trap.base && address - g_trap.base < g_trap.bytes;
  // Anything else is a real memory protection fault: report it as one.
  if (!in_window) kiln_fault_report((const struct kiln_exception_frame*)frame, exc_return);

  const uint32_t pc = frame[6];
  const uint16_t hw1 = *(const volatile uint16_t*)pc;
  const uint16_t hw2 = thumb_is_32bit(hw1) ? *(const volatile uint16_t*)(pc + 2u) : 0u;
  thumb_load_store access;
  const uint32_t offset = address - (uint32_t)g_trap.base;
  if (!thumb_decode_load_store(hw1, hw2, &access) || offset % 4u != 0) {
    board_printf("\n*** register trap: the instruction at pc=0x%08lx (0x%04x 0x%04x) accesses device register "
                 "0x%08lx; only aligned 32-bit LDR/STR reach the device model\n",
                 (unsigned long)pc, hw1, hw2, (unsigned long)address);
    kiln_fault_report((const struct kiln_exception_frame*)frame, exc_return);
  }
  uint32_t* rt = register_slot(frame, r4_r11, access.rt);
  const int refused = access.is_load ? g_trap.read(g_trap.context, offset, rt)
                                     : g_trap.write(g_trap.context, offset, *rt);
  if (refused != 0) {
    board_printf("\n*** register trap: the device model refuses a %s at offset 0x%lx (pc=0x%08lx)\n",
                 access.is_load ? "read" : "write", (unsigned long)offset, (unsigned long)pc);
    kiln_fault_report((const struct kiln_exception_frame*)frame, exc_return);
  }
  if (access.writeback) {
    uint32_t* rn = register_slot(frame, r4_r11, access.rn);
    if (rn == NULL) kiln_fault_report((const struct kiln_exception_frame*)frame, exc_return);
    *rn += (uint32_t)access.writeback_delta;
  }
  ++g_trap.accesses;
  SCB_CFSR = cfsr & CFSR_MMFSR_MASK;  // write-one-to-clear the MemManage status
  frame[6] = pc + access.length;
  frame[7] = thumb_it_advance(frame[7]);
}

/// MemManage: r0 = the frame on the stack the interrupted code used (EXC_RETURN bit 2),
/// r4-r11 pushed here so that the access can load into them, r2 = EXC_RETURN.
__attribute__((naked)) void kiln_memmanage_handler(void) {
  __asm__ volatile(
      "tst lr, #4\n"
      "ite eq\n"
      "mrseq r0, msp\n"
      "mrsne r0, psp\n"
      "push {r4-r11}\n"
      "mov r1, sp\n"
      "mov r2, lr\n"
      "push {r3, lr}\n"  // 40 bytes in all: the stack stays 8-byte aligned
      "bl kiln_register_trap_fault\n"
      "pop {r3, lr}\n"
      "pop {r4-r11}\n"
      "bx lr\n");
}

#else

int register_trap_install(uintptr_t base, uint32_t bytes, register_trap_read read,
                          register_trap_write write, void* context) {
  (void)base;
  (void)bytes;
  (void)read;
  (void)write;
  (void)context;
  board_printf("E [register trap] needs an Armv8-M MPU (this core is not Armv8-M Mainline)\n");
  return -1;
}

#endif
