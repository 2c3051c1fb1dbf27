// Semihosting: the one call firmware needs from the debugger (here QEMU), "exit with
// this status". SYS_EXIT_EXTENDED (0x20) carries any status; plain SYS_EXIT only
// success or failure. QEMU needs `-semihosting-config enable=on,target=native`.
#include "board.h"

enum {
  kSysExitExtended = 0x20,
  /// ADP_Stopped_ApplicationExit: the reason code for a normal program exit.
  kApplicationExit = 0x20026,
};

static int semihosting_call(int operation, void* argument) {
  register int r0 __asm__("r0") = operation;
  register void* r1 __asm__("r1") = argument;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void board_exit(int status) {
  uint32_t block[2] = {kApplicationExit, (uint32_t)status};
  semihosting_call(kSysExitExtended, block);
  // Without a debugger attached nothing ends the program: wait here, visibly idle.
  for (;;) {
    __asm__ volatile("wfi");
  }
}
