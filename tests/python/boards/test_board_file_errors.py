"""A wrong board file is refused with the file, the field and what is wrong: by kiln.boards
(every field) and, for the facts the firmware build uses, by the build itself, in the
same words."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kiln.boards import BoardFileError, load_board, read_board_file

sys.path.insert(0, str(Path(__file__).parent))
files = importlib.import_module("board_test_files")
sys.path.pop(0)


def region(data: dict, name: str) -> dict:
    return next(item for item in data["memory"]["regions"] if item["name"] == name)


def set_in(*path_and_value) -> Callable[[dict], None]:
    *path, value = path_and_value

    def change(data: dict) -> None:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value
    return change


# (id, change to the made-up board, what the error says, whether the firmware build checks it too)
CASES = [
    ("size", set_in("memory", "regions", 0, "size", "12Q"),
     "memory.regions[0].size: '12Q' is not a size or address", True),
    ("missing field", lambda d: d["npu"].pop("irq"), "npu.irq: missing", True),
    ("unknown region", set_in("memory", "code", "FLASH"),
     "memory.code: names region 'FLASH', which memory.regions does not have (BOOT, CODE_RAM, TCM_DATA, FAST_RAM, "
     "BULK_RAM)", True),
    ("overlap", lambda d: region(d, "FAST_RAM").update(origin="0x20030000"),
     "memory.regions: regions TCM_DATA and FAST_RAM overlap", True),
    ("code not executable", lambda d: region(d, "CODE_RAM").update(access="rw"),
     "memory.code: region CODE_RAM is not executable (access)", True),
    ("pools not writable", lambda d: region(d, "FAST_RAM").update(access="rx"),
     "memory.sram_pools: region FAST_RAM is not writable (access)", True),
    ("npu cannot reach the program", lambda d: region(d, "BULK_RAM").update(npu_visible=False),
     "memory.program: region BULK_RAM, which the NPU cannot reach (npu_visible is false)", True),
    ("npu family", set_in("npu", "families", ["ethos-u99"]),
     "npu.families: 'ethos-u99' is not one of ethos-u55, ethos-u65, ethos-u85", True),
    ("irq", set_in("npu", "irq", 480), "npu.irq: 480: an external interrupt number is 0 to 479", True),
    ("device", set_in("npu", "device", "emulated"), "npu.device: 'emulated' is not one of model, silicon", True),
    ("uart", set_in("console", "uart", "pl011"), "console.uart: 'pl011' is not one of cmsdk-apb-uart", True),
    ("timer", set_in("timer", "kind", "systick"),
     "timer.kind: 'systick' is not one of sse-system-counter, cmsdk-apb-timer", True),
    ("format", set_in("kiln_board", 2), "kiln_board: 2, but this Kiln reads board files of format 1", True),
    ("region name", set_in("memory", "regions", 0, "name", "BOOT-ROM"),
     "memory.regions[0].name: 'BOOT-ROM': a region name is a C identifier", True),
    ("empty region", set_in("memory", "regions", 0, "size", 0),
     "memory.regions[0]: region BOOT: 0 bytes at 0x00000000 is empty or past the 4 GiB address space", True),
    # Only kiln.boards reads these.
    ("misspelt key", lambda d: d["npu"].update(iqr=d["npu"].pop("irq")), "npu: unknown key 'iqr'", False),
    ("flag type", set_in("cpu", "fpu", "yes"), "cpu.fpu: true or false is expected, not 'yes'", False),
    ("qemu", set_in("qemu", {"machine": "mps3-an547"}), "qemu.cpu: missing", False),
    ("cache size without cache", set_in("cpu", "dcache", False),
     "cpu.dcache_bytes: a D-cache size, but cpu.dcache is false", False),
]


@pytest.mark.parametrize("change, message, build_checks_it", [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_a_wrong_board_file_is_refused_naming_the_field(tmp_path: Path, change, message: str,
                                                        build_checks_it: bool) -> None:
    data = files.made_up_board()
    change(data)
    path = files.write_board(tmp_path, data)
    with pytest.raises(BoardFileError) as error:
        read_board_file(path)
    assert str(error.value) == f"board file {path}: {message}" or str(error.value).startswith(
        f"board file {path}: {message}"), str(error.value)
    if build_checks_it:
        generated = files.run_cmake_generator(path, tmp_path / "out")
        assert generated.returncode != 0
        assert f"board file {path}: {message}" in " ".join(generated.output.split()), generated.output


def test_a_name_that_is_not_shipped_lists_the_shipped_boards() -> None:
    with pytest.raises(BoardFileError, match=r"no shipped board named 'corstone-310' \(shipped: corstone-300, "
                                             r"corstone-320, mps2-an386, mps2-an505; or give the path"):
        load_board("corstone-310")


def test_a_missing_file_and_bad_json_are_named(tmp_path: Path) -> None:
    with pytest.raises(BoardFileError, match="no such file"):
        load_board(tmp_path / "nowhere.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"kiln_board": 1,\n  "name": }')
    with pytest.raises(BoardFileError, match=r"bad.json: not JSON: Expecting value at line 2, column 11"):
        load_board(bad)
