"""Board profiles: one JSON file per board says what the firmware needs to know about it
(core, memory regions and what goes where, NPU base address, interrupt and security,
console, timer, QEMU machine, how to run an image). The format: docs/board-files.md.

The shipped boards are ``examples/arm/platform/boards/*.json``; a board file of your own
works wherever a name does (``kiln-deploy --board my_board.json``). The firmware build reads
the same files with CMake (examples/arm/platform/board_profile.cmake): the linker script,
the board support's compile definitions and the memory-fit check come from them, and the
memory manifest places its pools in the regions they name. One owner per fact: no board
number lives anywhere else.

    from kiln.boards import load_board
    board = load_board("corstone-300")          # or load_board("path/to/my_board.json")
    board.npu.base, board.npu.irq, board.sram_pool_region.size, board.qemu.machine

``python -m kiln.boards check FILE...`` checks board files; ``python -m kiln.boards list``
names the shipped ones.
"""

from kiln.boards.profile import (NPU_FAMILIES, BoardProfile, Console, Cpu, MemoryRegion, Npu, Placement, Qemu,
                                 Timer)
from kiln.boards.reader import FORMAT_VERSION, BoardFileError, parse_board, parse_bytes, read_board_file
from kiln.boards.shipped import (DEFAULT_BOARD, board_file, is_board_path, load_board, shipped_board_names,
                                 shipped_boards_folder)

__all__ = [
    "BoardFileError", "BoardProfile", "Console", "Cpu", "DEFAULT_BOARD", "FORMAT_VERSION", "MemoryRegion",
    "NPU_FAMILIES", "Npu", "Placement", "Qemu", "Timer", "board_file", "is_board_path", "load_board",
    "parse_board", "parse_bytes", "read_board_file", "shipped_board_names", "shipped_boards_folder",
]
