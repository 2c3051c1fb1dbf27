"""Firmware for an existing .pte (no kiln-aot step) with a chosen Cortex-M kernel flavour,
run in QEMU: ExecuTorch's programs on the firmware (tests/python/cortex_m) and the
flavour comparison of benchmarks/cortex_m.py. Besides the Cortex-M55 (Corstone-300,
mps3-an547) with each flavour, the DSP flavour runs on its own cores: a Cortex-M4 (MPS2
AN386, mps2-an386) and a Cortex-M33 (MPS2 AN505, mps2-an505)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kiln.boards import BoardProfile, load_board
from kiln.deploy.firmware import build_firmware, locate_sources
from kiln.deploy.prepare import PreparedProgram
from kiln.deploy.qemu import QemuResult, run_firmware
from kiln.memory.manifest import PoolBudget, manifest_paths, pool_budget, write_manifest
from kiln.targets import cpu_target

#: KILN_CORTEX_M_FLAVOUR values: what the Cortex-M55 build compiles its kernels for.
FLAVOURS = {"mve": "auto", "dsp": "dsp", "portable": "portable"}


@dataclass(frozen=True)
class Target:
    """A core, the kernel flavour its build compiles, and its board (a shipped board's name:
    its board file gives the pools' memory and the QEMU machine)."""

    cpu: str
    cmake_flavour: str
    board_name: str

    @property
    def profile(self) -> BoardProfile:
        return load_board(self.board_name)

    @property
    def board(self) -> PoolBudget:
        return pool_budget(self.profile)

    @property
    def machine(self) -> str:
        return self.profile.qemu.machine


#: Names build_and_run() takes: the three flavours on the Cortex-M55 (Corstone-300), then
#: the DSP flavour on the Cortex-M4 (MPS2 AN386) and the Cortex-M33 (MPS2 AN505).
TARGETS = {name: Target("cortex-m55", value, cpu_target("cortex-m55").board) for name, value in FLAVOURS.items()}
TARGETS["m4-dsp"] = Target("cortex-m4", "auto", cpu_target("cortex-m4").board)
TARGETS["m33-dsp"] = Target("cortex-m33", "auto", cpu_target("cortex-m33").board)


@dataclass(frozen=True)
class FirmwareRun:
    """QEMU's result and the ELF it ran."""

    result: QemuResult
    elf: Path


def prepare_existing(pte: Path, inputs: Sequence[Path], expected: Sequence[Path], out: Path,
                     board: PoolBudget | None = None) -> PreparedProgram:
    """The memory manifest of an existing program for ``board`` (default: the default
    board's budget), with its input and expected-output .npy files, ready for build_firmware."""
    out.mkdir(parents=True, exist_ok=True)
    arrays = [np.load(p) for p in inputs]
    manifest = write_manifest(pte, out, inputs=arrays, board=board)
    json_path, header_path = manifest_paths(pte, out)
    return PreparedProgram(pte.stem, pte, manifest, Path(json_path), Path(header_path), list(inputs), list(expected))


def build_and_run(prepared: PreparedProgram, flavour: str, build_dir: Path, timeout: float = 300.0) -> FirmwareRun:
    """Builds ``prepared`` into firmware for ``flavour`` (a key of TARGETS: its core and
    kernel flavour; prepare the program for that target's board), linking only the
    program's kernels, and runs it on the target's QEMU machine. Reusing ``build_dir``
    for another program recompiles only what differs."""
    target = TARGETS[flavour]
    profile = target.profile
    elf = build_firmware(prepared, build_dir, locate_sources(), build_dir / "build.log", cpu=target.cpu,
                         selective=True, board_file=profile.path,
                         cmake_args=[f"-DKILN_CORTEX_M_FLAVOUR={target.cmake_flavour}"])
    return FirmwareRun(run_firmware(elf, timeout=timeout, machine=profile.qemu.machine), elf)
