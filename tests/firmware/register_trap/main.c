/* Firmware test of the MPU register trap alone (examples/arm/platform/register_trap.h), with
 * a scratch "device" of 64 words instead of the NPU: loads and stores in several Thumb
 * encodings reach it with the right offsets and values — into low and high registers, with
 * pre- and post-indexed write-back, inside an IT block — and then a byte load, which the
 * trap must refuse by ending the firmware with a fault report (exit 3, KILN_EXIT_FAULT).
 * Any wrong value ends it with exit 1 first; a byte load that went through, with exit 0. */
#include <stdint.h>

#include "examples/arm/platform/board.h"
#include "examples/arm/platform/register_trap.h"

#define WINDOW 0x48102000u
#define WINDOW_BYTES 256u

static uint32_t g_registers[WINDOW_BYTES / 4];
static uint32_t g_last_offset = 0xffffffffu;

static int device_read(void* context, uint32_t offset, uint32_t* value) {
  (void)context;
  g_last_offset = offset;
  *value = g_registers[offset / 4];
  return 0;
}

static int device_write(void* context, uint32_t offset, uint32_t value) {
  (void)context;
  g_last_offset = offset;
  g_registers[offset / 4] = value;
  return 0;
}

static int g_failures;

static void expect(int ok, const char* what) {
  board_printf("%s [register trap] %s\n", ok ? "I" : "E", what);
  if (!ok) ++g_failures;
}

int main(void) {
  if (register_trap_install(WINDOW, WINDOW_BYTES, device_read, device_write, 0) != 0) return 1;
  for (uint32_t i = 0; i < WINDOW_BYTES / 4; ++i) g_registers[i] = 0xA5000000u | i;
  volatile uint32_t* window = (volatile uint32_t*)WINDOW;

  // Plain volatile accesses (the compiler's choice of encoding).
  expect(window[3] == (0xA5000000u | 3u) && g_last_offset == 12u, "word load at offset 12");
  window[5] = 0x12345678u;
  expect(g_registers[5] == 0x12345678u && g_last_offset == 20u, "word store at offset 20");

  // A high register, a 32-bit imm12 load and a pre-indexed load with write-back.
  uint32_t loaded, base = WINDOW;
  __asm__ volatile(
      "mov r8, #0\n"
      "ldr.w r8, [%[base], #0x80]\n"
      "mov %[loaded], r8\n"
      : [loaded] "=r"(loaded)
      : [base] "r"(base)
      : "r8", "memory");
  expect(loaded == (0xA5000000u | 32u), "ldr.w into r8, imm12 offset 0x80");
  __asm__ volatile("ldr %[loaded], [%[base], #8]!\n" : [loaded] "=&r"(loaded), [base] "+r"(base) : : "memory");
  expect(loaded == (0xA5000000u | 2u) && base == WINDOW + 8u, "pre-indexed ldr with write-back");
  // A post-indexed store with a negative step.
  uint32_t value = 0xCAFEF00Du;
  base = WINDOW + 0x40u;
  __asm__ volatile("str %[value], [%[base]], #-4\n" : [base] "+r"(base) : [value] "r"(value) : "memory");
  expect(g_registers[16] == 0xCAFEF00Du && base == WINDOW + 0x3Cu, "post-indexed str, write-back -4");
  // Inside an IT block: the conditional load executes and the IT state moves on to the
  // "else" slot, which must be skipped (a cleared or stuck IT state would run the mov).
  uint32_t first = 0, second = 0;
  __asm__ volatile(
      "movs %[second], #0\n"
      "movs %[first], #0\n"
      "cmp %[first], #0\n"
      "ite eq\n"
      "ldreq %[first], [%[window], #4]\n"
      "movne %[second], #7\n"
      : [first] "=&l"(first), [second] "=&l"(second)
      : [window] "l"(WINDOW)
      : "cc", "memory");
  expect(first == (0xA5000000u | 1u) && second == 0u, "ldr in the then-slot of an ITE block, the else-slot skipped");
  expect(register_trap_accesses() == 6u, "six accesses trapped");
  if (g_failures != 0) return 1;

  board_printf("I [register trap] a byte load must be refused now\n");
  const uint8_t byte = *(volatile uint8_t*)(WINDOW + 1u);
  board_printf("E [register trap] the byte load returned 0x%02x instead of stopping the firmware\n", byte);
  return 0;
}
