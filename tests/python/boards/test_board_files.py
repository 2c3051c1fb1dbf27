"""Every board file parses, and the two readers agree: what kiln.boards reads is what the
firmware build puts into the linker script and the compile definitions (the CMake side runs
as the build runs it, examples/arm/platform/board_profile.cmake, without building anything).
The compile definitions are compared whole, so none is left unchecked.

The remaining fields (description, core, FPU/MVE, region security and aliases, NPU
families, QEMU machine, how to run) are kiln-deploy's: tests/python/cli/test_deploy_board_file.py."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from kiln.boards import BoardProfile, load_board, read_board_file, shipped_board_names
from kiln.memory.manifest import pool_budget

sys.path.insert(0, str(Path(__file__).parent))
files = importlib.import_module("board_test_files")
sys.path.pop(0)

BOARD_FILES = sorted(files.SHIPPED.glob("*.json")) + [files.MADE_UP]


def hex32(value: int) -> str:
    """Addresses as the build writes them: 0x and eight upper-case digits."""
    return f"0x{value:08X}"


def expected_definitions(board: BoardProfile) -> dict[str, str]:
    """The compile definitions the board's facts must become (examples/arm/CMakeLists.txt
    gives them to the board support; the NPU driver will take the NPU ones)."""
    expected = {
        "KILN_BOARD_NAME": f'"{board.name}"',
        "KILN_BOARD_CPU_CLOCK_HZ": str(board.cpu.clock_hz),
        "KILN_BOARD_DCACHE_PRESENT": str(int(board.cpu.dcache)),
        "KILN_BOARD_UART0_BASE": hex32(board.console.base),
        "KILN_BOARD_TIMER_HZ": str(board.timer.hz),
        "KILN_BOARD_HAS_NPU": str(int(board.npu is not None)),
    }
    if board.cpu.dcache_bytes is not None:
        expected["KILN_BOARD_DCACHE_BYTES"] = str(board.cpu.dcache_bytes)
    if board.timer.kind == "sse-system-counter":
        expected["KILN_BOARD_SYSCOUNTER_CONTROL_BASE"] = hex32(board.timer.control_base)
        expected["KILN_BOARD_SYSCOUNTER_READ_BASE"] = hex32(board.timer.read_base)
    else:
        expected["KILN_BOARD_TIMER_BASE"] = hex32(board.timer.base)
    if board.npu is not None:
        npu = board.npu
        expected.update({
            "KILN_BOARD_NPU_BASE": hex32(npu.base),
            "KILN_BOARD_NPU_BASE_IS_SECURE": str(int(npu.security == "secure")),
            "KILN_BOARD_NPU_IRQ": str(npu.irq),
            "KILN_BOARD_NPU_SECURE_ENABLE": str(int(npu.secure_mode)),
            "KILN_BOARD_NPU_PRIVILEGE_ENABLE": str(int(npu.privileged_mode)),
            "KILN_BOARD_NPU_DEVICE_MODEL": str(int(npu.device == "model")),
            "KILN_BOARD_NPU_VISIBLE_REGION_COUNT": str(len(board.npu_visible_regions)),
        })
        if npu.alias is not None:
            expected["KILN_BOARD_NPU_BASE_ALIAS"] = hex32(npu.alias)
        for index, region in enumerate(board.npu_visible_regions):
            expected[f"KILN_BOARD_NPU_VISIBLE_REGION_{index}_BASE"] = hex32(region.origin)
            expected[f"KILN_BOARD_NPU_VISIBLE_REGION_{index}_BYTES"] = str(region.size)
    return expected


def memory_block(linker_script: str) -> list[tuple[str, str, int, int]]:
    """(name, access, origin, length) of each line of the MEMORY block."""
    block = re.search(r"MEMORY\s*\{(.*?)\}", linker_script, re.S).group(1)
    return [(name, access, int(origin, 16), int(length))
            for name, access, origin, length in re.findall(r"(\w+) \((\w+)\) : ORIGIN = (0x[0-9A-F]+), LENGTH = (\d+)",
                                                           block)]


def region_of_section(linker_script: str, section: str) -> str:
    """The region an output section goes to (``} > REGION``)."""
    return re.search(rf"^  {re.escape(section)}.*?^  \}} > (\w+)", linker_script, re.S | re.M).group(1)


def test_the_shipped_boards_are_the_documented_ones() -> None:
    assert shipped_board_names() == ["corstone-300", "corstone-320", "mps2-an386", "mps2-an505"]


@pytest.mark.parametrize("path", BOARD_FILES, ids=lambda path: path.stem)
def test_every_fact_reaches_the_linker_script_and_the_definitions(path: Path, tmp_path: Path) -> None:
    board = read_board_file(path)
    generated = files.run_cmake_generator(path, tmp_path)
    assert generated.returncode == 0, generated.output
    script = generated.linker_script

    assert memory_block(script) == [(r.name, r.access, r.origin, r.size) for r in board.regions]
    place = board.placement
    assert region_of_section(script, ".vectors :") == place.vectors
    assert region_of_section(script, ".text :") == place.code
    assert re.search(rf"\}} > {place.data} AT > {place.code}\n  __data_load", script)
    assert region_of_section(script, ".kiln_sram (NOLOAD)") == place.sram_pools
    assert region_of_section(script, ".kiln_ddr (NOLOAD)") == place.ddr_pools
    for section in (".bss (NOLOAD)", ".heap (NOLOAD)", ".stack (NOLOAD)"):
        assert region_of_section(script, section) == place.data
    assert region_of_section(script, ".kiln_program :") == place.program
    assert f"__kiln_stack_size = {place.stack_bytes};" in script
    assert f"__kiln_heap_size = {place.heap_bytes};" in script

    assert generated.definitions == expected_definitions(board)


@pytest.mark.parametrize("path", BOARD_FILES, ids=lambda path: path.stem)
def test_the_memory_manifest_places_pools_in_the_board_regions(path: Path) -> None:
    board = read_board_file(path)
    budget = pool_budget(board)
    assert (budget.name, budget.sram_bytes, budget.ddr_bytes) == (
        board.name, board.sram_pool_region.size, board.ddr_pool_region.size)


def test_the_code_region_option_moves_only_the_code(tmp_path: Path) -> None:
    path = files.SHIPPED / "corstone-300.json"
    generated = files.run_cmake_generator(path, tmp_path, "-DKILN_BOARD_CODE_REGION=ITCM")
    assert generated.returncode == 0, generated.output
    assert region_of_section(generated.linker_script, ".text :") == "ITCM"
    assert region_of_section(generated.linker_script, ".vectors :") == "ITCM"
    assert region_of_section(generated.linker_script, ".bss (NOLOAD)") == "DTCM"


def test_corstone_facts_are_arms() -> None:
    """The facts checked against Arm's platform descriptions (the board files cite them)."""
    c300, c320 = load_board("corstone-300"), load_board("corstone-320")
    assert (c300.npu.base, c300.npu.alias, c300.npu.irq) == (0x48102000, 0x58102000, 56)
    assert (c320.npu.base, c320.npu.alias, c320.npu.irq) == (0x40004000, 0x50004000, 16)
    assert c300.npu.families == ("ethos-u55", "ethos-u65") and c320.npu.families == ("ethos-u85",)
    assert [(r.name, r.size) for r in c320.regions if r.name in ("ITCM", "DTCM", "SRAM", "ISRAM")] == [
        ("ITCM", 32 * 1024), ("SRAM", 2 * 1024**2), ("DTCM", 32 * 1024), ("ISRAM", 4 * 1024**2)]
    assert c320.region("DDR").origin == 0x70000000 and c320.region("DDR").size == 256 * 1024**2
    assert c300.qemu.machine == c320.qemu.machine == "mps3-an547"
    assert c300.sources and c320.sources


def test_the_documented_example_is_a_board_file(tmp_path: Path) -> None:
    """docs/board-files.md's complete example parses in both readers."""
    docs = (files.CHECKOUT / "docs" / "board-files.md").read_text()
    example = re.search(r"```json\n(.*?)```", docs, re.S).group(1)
    path = tmp_path / "my_board.json"
    path.write_text(example)
    board = read_board_file(path)
    assert (board.name, board.placement.code, board.npu.base, board.qemu) == ("my-m55-board", "MRAM", 0x400E1000, None)
    generated = files.run_cmake_generator(path, tmp_path)
    assert generated.returncode == 0, generated.output
    assert generated.definitions == expected_definitions(board)
