"""``python -m kiln.boards check FILE...`` checks board files (every field; the firmware
build checks only what it uses); ``python -m kiln.boards list`` names the shipped boards."""

from __future__ import annotations

import argparse
import sys

from kiln.boards.profile import BoardProfile
from kiln.boards.reader import BoardFileError
from kiln.boards.shipped import load_board, shipped_board_names


def describe(board: BoardProfile) -> str:
    """One line: core, NPU, where it runs, regions."""
    npu = (f"{'/'.join(board.npu.families)} at 0x{board.npu.base:08X}, IRQ {board.npu.irq}" if board.npu
           else "no NPU")
    runs = f"QEMU {board.qemu.machine}" if board.qemu else "no QEMU machine (build only)"
    regions = ", ".join(f"{r.name} {r.size // 1024} KiB at 0x{r.origin:08X}" for r in board.regions)
    return f"{board.name}: {board.cpu.core}, {npu}, {runs}; {regions}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kiln.boards", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="check board files (names or paths)")
    check.add_argument("boards", nargs="+", help="shipped board names or board file paths")
    commands.add_parser("list", help="name the shipped boards")
    args = parser.parse_args(argv)
    if args.command == "list":
        print("\n".join(shipped_board_names()))
        return 0
    status = 0
    for name in args.boards:
        try:
            print(f"ok {describe(load_board(name))}")
        except BoardFileError as error:
            print(f"error: {error}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
