"""``kiln-deploy --board``: a shipped board by name or a board file of the user's.

The made-up board (tests/python/boards/made_up_board.json: other region names, sizes and
addresses, another NPU base, no QEMU machine) builds, links and fits from a folder outside
the checkout, with relative paths into an output folder that does not exist yet, and
leaves the image to flash and the note of how to run it; a copy with too little memory
fails the build naming the region and the sizes. One firmware build serves both (the
second reuses its folder and stops at the memory check). Its regions lie inside QEMU's
mps3-an547 map, so the image is also run there: it must compute what the host computes.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kiln.boards import BoardFileError
from kiln.cli import deploy as kiln_deploy
from kiln.deploy.prepare import DeployError
from kiln.deploy.qemu import run_firmware

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "boards"))
files = importlib.import_module("board_test_files")
sys.path.pop(0)

KILN_DEPLOY = Path(sys.executable).with_name("kiln-deploy")


def checked_board(argv: list[str]):
    args = kiln_deploy.parse_arguments(["--model_name=add", *argv])
    kiln_deploy.check_target(args)
    board = kiln_deploy.board_for(args)
    if board.qemu is None:
        args.build_only = True
    kiln_deploy.check_board(args, board)
    return args, board


def test_a_board_is_named_or_given_as_a_file() -> None:
    args, board = checked_board(["--board", "corstone-320"])
    assert (board.name, args.cpu) == ("corstone-320", "cortex-m55")  # QEMU's core runs it
    args, board = checked_board(["--board", "corstone-320", "--build-only"])
    assert args.cpu == "cortex-m85"  # built for the board's own core when not run on QEMU
    args, board = checked_board(["--board", str(files.MADE_UP)])
    assert (board.name, board.path, args.cpu, args.build_only) == ("made-up-m55", files.MADE_UP, "cortex-m55", True)


@pytest.mark.parametrize("argv, message", [
    (["--board", "mps2-an386", "-q", "-d"], "board mps2-an386 has no NPU"),
    (["--board", "corstone-300", "-q", "-d", "--target", "ethos-u85-256"],
     "board corstone-300's NPU is ethos-u55 or ethos-u65, not ethos-u85-256"),
    (["--board", "mps2-an505"], "board mps2-an505's firmware would run on a cortex-m33"),
    (["--board", "corstone-310"], "no shipped board named 'corstone-310'"),
])
def test_a_board_that_cannot_run_the_program_is_refused(argv: list[str], message: str) -> None:
    with pytest.raises((DeployError, BoardFileError)) as error:
        checked_board(argv)
    assert message in str(error.value)
    assert getattr(error.value, "exit_code", 2) == 2


def test_a_missing_board_file_is_one_line_before_anything_is_built(tmp_path: Path) -> None:
    completed = subprocess.run([str(KILN_DEPLOY), "--model_name", "add", "--board", "boards/nowhere.json"],
                               capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert completed.returncode == 2
    assert completed.stderr.strip() == f"error: board file {tmp_path / 'boards' / 'nowhere.json'}: no such file"
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def outside_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the checkout with the made-up board in boards/ and a copy whose
    BULK_RAM (program and "DDR" pools) is 32 KiB: smaller than smallcnn's program."""
    folder = tmp_path_factory.mktemp("user")
    (folder / "boards").mkdir()
    files.write_board(folder / "boards", files.made_up_board(), "made-up-m55.json")
    small = files.made_up_board()
    small["name"] = "made-up-small"
    small["memory"]["regions"][4]["size"] = "32K"
    files.write_board(folder / "boards", small, "made-up-small.json")
    return folder


def deploy(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KILN_DEPLOY), "--model_name", "smallcnn", "--selective", "--build-dir", "build",
                           *argv], capture_output=True, text=True, timeout=3600, cwd=folder)


@pytest.mark.slow
def test_a_made_up_board_builds_links_fits_and_leaves_an_image(outside_the_checkout: Path) -> None:
    folder = outside_the_checkout
    completed = deploy(folder, "--board", "boards/made-up-m55.json", "--build-only", "-o", "out/made-up")
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-3000:]
    stdout = completed.stdout
    assert "board made-up-m55 has no QEMU machine (no qemu in its board file): building only" in stdout

    image = folder / "out" / "made-up" / "image"
    assert sorted(path.name for path in image.iterdir()) == [
        "smallcnn-BOOT.bin", "smallcnn-BULK_RAM.bin", "smallcnn-CODE_RAM.bin", "smallcnn.elf", "smallcnn.hex",
        "smallcnn.run.txt"]
    assert image.joinpath("smallcnn.hex").read_text().startswith(":")
    # The note, on the terminal (paths relative to the current folder) and next to the image.
    assert "out/made-up/image/smallcnn-BOOT.bin: load at 0x00000000 (region BOOT: .vectors)" in stdout
    # The program follows the (empty, NOLOAD) DDR pools in BULK_RAM.
    program = re.search(r"out/made-up/image/smallcnn-BULK_RAM.bin: load at (0x[0-9A-F]{8}) \(region BULK_RAM: "
                        r"\.kiln_program\)", stdout)
    assert program and 0x64000000 <= int(program.group(1), 16) < 0x64000000 + 32 * 1024**2, stdout
    assert ("Flash out/made-up/image/smallcnn.hex with the board's programmer (it does not exist: the tests run "
            "out/made-up/image/smallcnn.elf on QEMU's mps3-an547 instead)") in stdout
    assert ("Ethos-U programs drive the board's ethos-u55 at 0x4A000000 (IRQ 99) through Kiln's register-level "
            "driver, which has not run on silicon") in stdout
    note = image.joinpath("smallcnn.run.txt").read_text()
    assert "  smallcnn-CODE_RAM.bin: load at 0x01000000 (region CODE_RAM: .text" in note

    # What the build made of the board file: its regions and its NPU.
    built = folder / "build" / "examples" / "arm"
    script = built.joinpath("made-up-m55.ld").read_text()
    assert "BULK_RAM (rw) : ORIGIN = 0x64000000, LENGTH = 33554432" in script
    definitions = built.joinpath("made-up-m55.defines").read_text().splitlines()
    assert {"KILN_BOARD_NPU_BASE=0x4A000000", "KILN_BOARD_NPU_IRQ=99", "KILN_BOARD_NPU_DEVICE_MODEL=0",
            "KILN_BOARD_NPU_SECURE_ENABLE=0", "KILN_BOARD_DCACHE_BYTES=32768"} <= set(definitions)
    manifest = json.loads((folder / "out" / "made-up" / "smallcnn.manifest.json").read_text())
    assert manifest["board"] == {"name": "made-up-m55", "sram_bytes": 1024**2, "ddr_bytes": 32 * 1024**2}

    # The image runs where its addresses exist, and computes what the host computes.
    result = run_firmware(image / "smallcnn.elf", timeout=120, machine="mps3-an547")
    assert result.exit_code == 0, result.output[-3000:]
    assert "outputs equal the host runtime's, bit for bit" in result.output


@pytest.mark.slow
def test_a_board_too_small_for_the_program_fails_naming_the_region(outside_the_checkout: Path) -> None:
    completed = deploy(outside_the_checkout, "--board", "boards/made-up-small.json", "-o", "out/small")
    assert completed.returncode != 0
    error = completed.stderr.strip()
    assert error.startswith("error: checking that the program fits the board failed: the program "
                            "smallcnn.pte does not fit board made-up-small: region BULK_RAM (at 0x64000000) has "
                            "32768 bytes, but would hold"), error
    assert "too many" in error and len(error.splitlines()) == 1
    assert not (outside_the_checkout / "out" / "small" / "image").exists()
