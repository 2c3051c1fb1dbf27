"""The build's memory-fit check (examples/arm/platform/check_memory_fit.cmake, run by every
firmware build before it compiles): a program and its pools fit the board regions that hold
them, or the build stops with one line naming the region, what it would hold and the sizes.
Run here on a made-up manifest header, without building anything."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
files = importlib.import_module("board_test_files")
sys.path.pop(0)

HEADER = """#pragma once
#define KILN_MANIFEST_PROGRAM "model.pte"
#define KILN_MANIFEST_PROGRAM_BYTES {program}
#define KILN_MANIFEST_SRAM_BYTES {sram}
#define KILN_MANIFEST_DDR_BYTES {ddr}
"""


def prepare(tmp_path: Path, board: dict, program: int, sram: int, ddr: int) -> tuple[list[str], Path, list[Path]]:
    generated = files.run_cmake_generator(files.write_board(tmp_path, board), tmp_path)
    assert generated.returncode == 0, generated.output
    header = tmp_path / "model_memory.h"
    header.write_text(HEADER.format(program=program, sram=sram, ddr=ddr))
    pte, data = tmp_path / "model.pte", tmp_path / "input_0.npy"
    pte.write_bytes(bytes(program))
    data.write_bytes(bytes(100))
    return generated.fit_arguments, header, [pte, data]


def test_a_program_that_fits_passes(tmp_path: Path) -> None:
    arguments, header, embedded = prepare(tmp_path, files.made_up_board(), 30_000, 500_000, 4_000)
    completed = files.run_fit_check(arguments, header, embedded, tmp_path / "fits.stamp")
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "fits.stamp").read_text() == "made-up-m55: fits\n"


def test_too_many_sram_pools_name_the_region_and_the_sizes(tmp_path: Path) -> None:
    arguments, header, embedded = prepare(tmp_path, files.made_up_board(), 30_000, 2_000_000, 0)
    completed = files.run_fit_check(arguments, header, embedded, tmp_path / "fits.stamp")
    assert completed.returncode != 0
    assert ("error: the program model.pte does not fit board made-up-m55: region FAST_RAM (at 0x21100000) has "
            "1048576 bytes, but would hold the pools placed in \"SRAM\" (2000000 bytes): 2000000 bytes, 951424 "
            "too many.") in completed.stderr
    assert not (tmp_path / "fits.stamp").exists()


def test_a_region_holding_program_and_pools_counts_both(tmp_path: Path) -> None:
    """BULK_RAM holds the program (30,016 + 128 bytes, each 32-byte aligned), the "DDR" pools
    and, here, the ETDump buffer."""
    board = files.made_up_board()
    board["memory"]["regions"][4]["size"] = "64K"
    arguments, header, embedded = prepare(tmp_path, board, 30_000, 0, 30_000)
    completed = files.run_fit_check(arguments, header, embedded, tmp_path / "fits.stamp", extra_ddr_bytes=8_000)
    assert completed.returncode != 0
    assert ("region BULK_RAM (at 0x64000000) has 65536 bytes, but would hold the pools placed in \"DDR\" and the "
            "ETDump buffer (38000 bytes) + the embedded program and its inputs (30144 bytes): 68144 bytes, 2608 "
            "too many.") in completed.stderr
