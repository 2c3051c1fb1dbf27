# Memory map of the MPS2 with the AN386 FPGA image (Cortex-M4 with FPU and the DSP
# extension) as QEMU's mps2-an386 models it (hw/arm/mps2.c: the AN385 layout). The
# linker template's regions (corstone-300.ld.in) land in its RAMs:
#
#   region  origin       size      in           holds
#   ITCM    0x00000000    64 KiB   ZBT SSRAM1   vector table (QEMU reads the reset vector at 0x0)
#   SRAM    0x00010000   3.9 MiB   ZBT SSRAM1   code and read-only data
#   DTCM    0x20000000     4 MiB   ZBT SSRAM2&3 .data, .bss, heap, stack
#   ISRAM   0x21000000     8 MiB   PSRAM        pools placed in "SRAM", the kernel cases' memory
#   DDR     0x21800000     8 MiB   PSRAM        the embedded program or case file, pools in "DDR"
# The real board has no DDR; "DDR" here is the second half of its 16 MiB PSRAM.
set(KILN_BOARD_NAME "mps2-an386")
set(KILN_BOARD_QEMU_MACHINE "mps2-an386")
set(KILN_BOARD_LINKER_TEMPLATE "corstone-300.ld.in")
set(KILN_BOARD_ITCM_ORIGIN 0x00000000)
set(KILN_BOARD_ITCM_SIZE 65536)
set(KILN_BOARD_SRAM_ORIGIN 0x00010000)
set(KILN_BOARD_SRAM_SIZE 4128768)
set(KILN_BOARD_DTCM_ORIGIN 0x20000000)
set(KILN_BOARD_DTCM_SIZE 4194304)
set(KILN_BOARD_ISRAM_ORIGIN 0x21000000)
set(KILN_BOARD_ISRAM_SIZE 8388608)
set(KILN_BOARD_DDR_ORIGIN 0x21800000)
set(KILN_BOARD_DDR_SIZE 8388608)
set(KILN_BOARD_DATA_REGION "DTCM")
set(KILN_BOARD_STACK_SIZE 65536)
set(KILN_BOARD_HEAP_SIZE 16384)
# Peripherals: CMSDK APB UART0, and CMSDK APB timer 0 for time (no system counter).
set(KILN_BOARD_UART0_BASE 0x40004000)
set(KILN_BOARD_TIMER_SOURCE "timer_cmsdk.c")
set(KILN_BOARD_TIMER_BASE 0x40000000)
# The timers count the 25 MHz system clock; with `-icount shift=0` (one instruction per
# virtual nanosecond) a tick is 40 instructions.
set(KILN_BOARD_SYSCOUNTER_HZ 25000000)
set(KILN_BOARD_SYSCOUNTER_CONTROL_BASE 0)
set(KILN_BOARD_SYSCOUNTER_READ_BASE 0)
