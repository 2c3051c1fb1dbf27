"""Board files for the tests: the shipped ones, the made-up board next to this file, and what
the firmware build generates from a board file (examples/arm/platform/generate_board_files.cmake,
run without building anything). Imported by the tests of this folder and of tests/python/cli."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[3]
SHIPPED = CHECKOUT / "examples" / "arm" / "platform" / "boards"
GENERATE = CHECKOUT / "examples" / "arm" / "platform" / "generate_board_files.cmake"
CHECK_FIT = CHECKOUT / "examples" / "arm" / "platform" / "check_memory_fit.cmake"
MADE_UP = Path(__file__).with_name("made_up_board.json")


def made_up_board() -> dict:
    """A fresh copy of the made-up board's JSON object (tests change it)."""
    return copy.deepcopy(json.loads(MADE_UP.read_text()))


@dataclass(frozen=True)
class Generated:
    """What CMake made of a board file: the linker script and the compile definitions."""

    returncode: int
    output: str
    linker_script: str
    definitions: dict[str, str]
    #: The board's -D arguments of the build's memory-fit check.
    fit_arguments: list[str]


def run_cmake_generator(board_file: Path, out: Path, *defines: str) -> Generated:
    """Runs the firmware build's generator on ``board_file`` (``defines``: more -D options)."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    completed = subprocess.run([cmake, f"-DKILN_BOARD_FILE={board_file}", f"-DOUTPUT_DIR={out}", *defines,
                                "-P", str(GENERATE)], capture_output=True, text=True, timeout=60)
    output = completed.stdout + completed.stderr
    if completed.returncode != 0:
        return Generated(completed.returncode, output, "", {}, [])
    name = json.loads(Path(board_file).read_text())["name"]
    definitions = dict(line.split("=", 1) for line in (out / f"{name}.defines").read_text().splitlines())
    return Generated(0, output, (out / f"{name}.ld").read_text(), definitions,
                     (out / f"{name}.fit").read_text().splitlines())


def run_fit_check(fit_arguments: list[str], header: Path, embedded: list[Path], stamp: Path,
                  extra_ddr_bytes: int = 0) -> subprocess.CompletedProcess[str]:
    """Runs the build's memory-fit check as kiln_add_firmware() does."""
    return subprocess.run([shutil.which("cmake"), f"-DMEMORY_HEADER={header}",
                           "-DEMBEDDED=" + "|".join(str(path) for path in embedded),
                           f"-DEXTRA_DDR_BYTES={extra_ddr_bytes}", *fit_arguments, f"-DSTAMP={stamp}",
                           "-P", str(CHECK_FIT)], capture_output=True, text=True, timeout=60)


def write_board(folder: Path, data: dict, name: str = "board.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(data, indent=2))
    return path
