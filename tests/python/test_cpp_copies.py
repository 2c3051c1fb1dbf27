"""The C++ copies of facts the Python package owns say what the package says.

* ``config_from_target_name`` (backends/arm/vnpu/virtual_npu.cpp) turns a target name into
  the architecture, MACs and cores the virtual NPU runs; a row there that disagrees with
  :data:`kiln.targets.NPU_TARGETS` would run a program on a different NPU than it was
  compiled for.
* The Cortex-M targets' firmware presets are CMakePresets.json's, their boards shipped ones.
* The bundled-program tolerances of ``kiln-run`` and the firmware are
  :mod:`kiln.tolerances`' (``kiln-deploy`` passes its own to the firmware build).

The C++ sources are read, not built: the tests run without the extension.
"""

from __future__ import annotations

import re
from pathlib import Path

from kiln.targets import NPU_FAMILIES, NPU_TARGETS, TARGETS, family_of, macs_of
from kiln.tolerances import BUNDLE_ATOL, BUNDLE_RTOL

REPO = Path(__file__).resolve().parents[2]
VIRTUAL_NPU = REPO / "backends" / "arm" / "vnpu" / "virtual_npu.cpp"
_ROW = re.compile(r'\{"(ethos-u\d\d)-",\s*Arch::EthosU(\d\d),\s*(\d+),\s*(\d+)\}')


def _cpp_rows() -> list[tuple[str, int, int]]:
    text = VIRTUAL_NPU.read_text()
    table = text[text.index("kTargets[]"):]
    table = table[: table.index("};")]
    rows = []
    for prefix, arch, macs, cores in _ROW.findall(table):
        assert prefix.endswith(arch), f"{prefix} row names Arch::EthosU{arch}"
        rows.append((f"{prefix}-{macs}", int(macs), int(cores)))
    return rows


def test_the_virtual_npu_knows_every_target_with_its_macs_and_cores() -> None:
    assert _cpp_rows() == [(t.name, t.macs, t.cores) for t in NPU_TARGETS]


def test_every_target_name_says_its_family_and_macs() -> None:
    assert TARGETS == tuple(t.name for t in NPU_TARGETS)
    assert [(family_of(t.name), macs_of(t.name)) for t in NPU_TARGETS] == [(t.family, t.macs) for t in NPU_TARGETS]
    assert {t.family for t in NPU_TARGETS} == set(NPU_FAMILIES)


def test_the_runners_check_bundled_programs_with_the_package_tolerances() -> None:
    runner = (REPO / "tools" / "kiln_run" / "runner_options.h").read_text()
    firmware = (REPO / "examples" / "arm" / "executor_runner" / "firmware_options.cpp").read_text()
    found = {
        "kiln-run": tuple(float(re.search(rf"kDefaultBundle{name} = ([0-9.e+-]+);", runner).group(1))
                          for name in ("Rtol", "Atol")),
        "firmware": tuple(float(re.search(rf"#define KILN_FIRMWARE_BUNDLE_{name} ([0-9.e+-]+)", firmware).group(1))
                          for name in ("RTOL", "ATOL")),
    }
    assert found == {"kiln-run": (BUNDLE_RTOL, BUNDLE_ATOL), "firmware": (BUNDLE_RTOL, BUNDLE_ATOL)}


def test_every_cortex_m_preset_and_board_of_the_target_table_exists() -> None:
    import json

    from kiln.boards import shipped_board_names
    from kiln.targets import CPU_TARGETS

    presets = {p["name"] for p in json.loads((REPO / "CMakePresets.json").read_text())["configurePresets"]}
    assert sorted(t.preset for t in CPU_TARGETS if t.preset and t.preset not in presets) == []
    assert sorted(t.board for t in CPU_TARGETS if t.board and t.board not in shipped_board_names(REPO)) == []
