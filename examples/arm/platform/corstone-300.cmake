# Memory map of the Corstone-300 (SSE-300 + Cortex-M55) as QEMU's mps3-an547 models it.
# One place for the numbers: the linker script is configured from them and the firmware
# build checks the program's memory manifest against them.
#
#   region  origin       size     holds
#   ITCM    0x00000000   512 KiB  vector table (QEMU reads the reset vector at 0x0); code
#                                 if KILN_BOARD_CODE_REGION=ITCM (fits selective builds)
#   SRAM    0x01000000   2 MiB    code (KILN_BOARD_CODE_REGION=SRAM, the default: every
#                                 kernel together is more than the ITCM holds)
#   DTCM    0x20000000   512 KiB  .data, .bss, heap (newlib), stack
#   ISRAM   0x21000000   4 MiB    Kiln pools placed in "SRAM": planned buffers, allocators
#   DDR     0x60000000   2 GiB    the embedded .pte, inputs, pools placed in "DDR"
set(KILN_BOARD_NAME "corstone-300")
set(KILN_BOARD_QEMU_MACHINE "mps3-an547")
set(KILN_BOARD_LINKER_TEMPLATE "corstone-300.ld.in")
set(KILN_BOARD_ITCM_ORIGIN 0x00000000)
set(KILN_BOARD_ITCM_SIZE 524288)
set(KILN_BOARD_SRAM_ORIGIN 0x01000000)
set(KILN_BOARD_SRAM_SIZE 2097152)
set(KILN_BOARD_DTCM_ORIGIN 0x20000000)
set(KILN_BOARD_DTCM_SIZE 524288)
set(KILN_BOARD_ISRAM_ORIGIN 0x21000000)
set(KILN_BOARD_ISRAM_SIZE 4194304)
set(KILN_BOARD_DDR_ORIGIN 0x60000000)
set(KILN_BOARD_DDR_SIZE 2147483648)
# .data, .bss, heap and stack (KILN_BOARD_CODE_REGION, a cache option, places the code).
set(KILN_BOARD_DATA_REGION "DTCM")
# Stack and newlib heap (vsnprintf of floating-point numbers allocates) in the DTCM.
set(KILN_BOARD_STACK_SIZE 65536)
set(KILN_BOARD_HEAP_SIZE 16384)
# Peripherals.
set(KILN_BOARD_UART0_BASE 0x49303000)
set(KILN_BOARD_SYSCOUNTER_CONTROL_BASE 0x58100000)
set(KILN_BOARD_SYSCOUNTER_READ_BASE 0x58101000)
# The system counter runs at 32 MHz; QEMU with `-icount shift=0` executes one
# instruction per virtual nanosecond, so one tick is 31.25 instructions.
set(KILN_BOARD_SYSCOUNTER_HZ 32000000)
