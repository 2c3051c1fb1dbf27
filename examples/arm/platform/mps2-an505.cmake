# Memory map of the MPS2 with the AN505 FPGA image (Cortex-M33 with FPU and the DSP
# extension, ARMv8-M IoT Kit) as QEMU's mps2-an505 models it (hw/arm/mps2-tz.c). The
# core resets in the Secure state with its vector table at 0x10000000 (the Secure alias
# of ZBT SSRAM1), and the firmware stays Secure: it uses the Secure aliases (address
# bit 28 set) of the SSRAMs and peripherals. The linker template's regions
# (corstone-300.ld.in) land in its RAMs:
#
#   region  origin       size      in                     holds
#   ITCM    0x10000000    64 KiB   ZBT SSRAM1 (Secure)    vector table
#   SRAM    0x10010000   3.9 MiB   ZBT SSRAM1 (Secure)    code and read-only data
#   DTCM    0x38000000     4 MiB   ZBT SSRAM2, 3 (Secure) .data, .bss, heap, stack
#   ISRAM   0x80000000     8 MiB   QEMU's 16 MiB RAM      pools placed in "SRAM", the kernel cases' memory
#   DDR     0x80800000     8 MiB   QEMU's 16 MiB RAM      the embedded program or case file
set(KILN_BOARD_NAME "mps2-an505")
set(KILN_BOARD_QEMU_MACHINE "mps2-an505")
set(KILN_BOARD_LINKER_TEMPLATE "corstone-300.ld.in")
set(KILN_BOARD_ITCM_ORIGIN 0x10000000)
set(KILN_BOARD_ITCM_SIZE 65536)
set(KILN_BOARD_SRAM_ORIGIN 0x10010000)
set(KILN_BOARD_SRAM_SIZE 4128768)
set(KILN_BOARD_DTCM_ORIGIN 0x38000000)
set(KILN_BOARD_DTCM_SIZE 4194304)
set(KILN_BOARD_ISRAM_ORIGIN 0x80000000)
set(KILN_BOARD_ISRAM_SIZE 8388608)
set(KILN_BOARD_DDR_ORIGIN 0x80800000)
set(KILN_BOARD_DDR_SIZE 8388608)
set(KILN_BOARD_DATA_REGION "DTCM")
set(KILN_BOARD_STACK_SIZE 65536)
set(KILN_BOARD_HEAP_SIZE 16384)
# Peripherals (Secure aliases): CMSDK APB UART0 and the IoT Kit's CMSDK timer 0.
set(KILN_BOARD_UART0_BASE 0x50200000)
set(KILN_BOARD_TIMER_SOURCE "timer_cmsdk.c")
set(KILN_BOARD_TIMER_BASE 0x50000000)
# The IoT Kit's timers count its 20 MHz main clock: one tick is 50 instructions with
# `-icount shift=0`.
set(KILN_BOARD_SYSCOUNTER_HZ 20000000)
set(KILN_BOARD_SYSCOUNTER_CONTROL_BASE 0)
set(KILN_BOARD_SYSCOUNTER_READ_BASE 0)
