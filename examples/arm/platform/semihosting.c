// Semihosting: the calls firmware needs from the debugger (here QEMU): "exit with this
// status" and "write this file on the host" (an ETDump). SYS_EXIT_EXTENDED (0x20)
// carries any status; plain SYS_EXIT only success or failure. QEMU needs
// `-semihosting-config enable=on,target=native`.
#include <string.h>

#include "board.h"

enum {
  kSysOpen = 0x01,
  kSysClose = 0x02,
  kSysWrite = 0x05,
  /// SYS_OPEN mode 5: "wb".
  kOpenWriteBinary = 5,
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

int board_write_host_file(const char* path, const void* data, size_t size) {
  uint32_t open_block[3] = {(uint32_t)(uintptr_t)path, kOpenWriteBinary, (uint32_t)strlen(path)};
  const int handle = semihosting_call(kSysOpen, open_block);
  if (handle == -1) return -1;
  uint32_t write_block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)data, (uint32_t)size};
  // SYS_WRITE returns the number of bytes it could NOT write.
  const int unwritten = semihosting_call(kSysWrite, write_block);
  uint32_t close_block[1] = {(uint32_t)handle};
  const int closed = semihosting_call(kSysClose, close_block);
  return unwritten == 0 && closed == 0 ? 0 : -1;
}

void board_exit(int status) {
  uint32_t block[2] = {kApplicationExit, (uint32_t)status};
  semihosting_call(kSysExitExtended, block);
  // Without a debugger attached nothing ends the program: wait here, visibly idle.
  for (;;) {
    __asm__ volatile("wfi");
  }
}
