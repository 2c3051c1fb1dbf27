# Memory of the Corstone-320 (SSE-320 + Cortex-M85 + Ethos-U85) as Arm's published memory
# map gives it, for firmware that runs Ethos-U85 programs. QEMU has no SSE-320 machine (nor
# a Cortex-M85), so this firmware runs on QEMU's mps3-an547 (Corstone-300, Cortex-M55), whose
# address map holds the Corstone-320's regions at the same (non-secure alias) addresses, and
# the Ethos-U85 is Kiln's virtual NPU inside the firmware. What the profile checks is that a
# program and its pools fit a Corstone-320: its TCMs are 32 KiB (not 512 KiB), so code, data
# and stack live in the 2 MiB SRAM; the pools in the 4 MiB ISRAM and the DDR.
#
#   region  origin       size     holds
#   ITCM    0x00000000   32 KiB   vector table (QEMU reads the reset vector at 0x0)
#   SRAM    0x01000000   2 MiB    code, read-only data, .data, .bss, heap, stack
#   DTCM    0x20000000   32 KiB   (unused)
#   ISRAM   0x21000000   4 MiB    Kiln pools placed in "SRAM": planned buffers, allocators
#   DDR     0x70000000   256 MiB  the embedded .pte, inputs, pools placed in "DDR" (the
#                                 secure DDR4 window a firmware without TrustZone uses)
set(KILN_BOARD_NAME "corstone-320")
set(KILN_BOARD_QEMU_MACHINE "mps3-an547")
set(KILN_BOARD_LINKER_TEMPLATE "corstone-300.ld.in")
set(KILN_BOARD_ITCM_ORIGIN 0x00000000)
set(KILN_BOARD_ITCM_SIZE 32768)
set(KILN_BOARD_SRAM_ORIGIN 0x01000000)
set(KILN_BOARD_SRAM_SIZE 2097152)
set(KILN_BOARD_DTCM_ORIGIN 0x20000000)
set(KILN_BOARD_DTCM_SIZE 32768)
set(KILN_BOARD_ISRAM_ORIGIN 0x21000000)
set(KILN_BOARD_ISRAM_SIZE 4194304)
set(KILN_BOARD_DDR_ORIGIN 0x70000000)
set(KILN_BOARD_DDR_SIZE 268435456)
set(KILN_BOARD_CODE_REGION "SRAM")
set(KILN_BOARD_DATA_REGION "SRAM")
set(KILN_BOARD_STACK_SIZE 65536)
set(KILN_BOARD_HEAP_SIZE 16384)
# Peripherals: the mps3-an547's, where the firmware runs.
set(KILN_BOARD_UART0_BASE 0x49303000)
set(KILN_BOARD_SYSCOUNTER_CONTROL_BASE 0x58100000)
set(KILN_BOARD_SYSCOUNTER_READ_BASE 0x58101000)
set(KILN_BOARD_SYSCOUNTER_HZ 32000000)
