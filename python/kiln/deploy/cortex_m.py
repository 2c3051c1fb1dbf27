"""Firmware for an existing .pte (no kiln-aot step) with a chosen Cortex-M kernel flavour,
run in QEMU: ExecuTorch's programs on the firmware (tests/python/cortex_m) and the
flavour comparison of benchmarks/cortex_m.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kiln.deploy.firmware import build_firmware, locate_sources
from kiln.deploy.prepare import PreparedProgram
from kiln.deploy.qemu import QemuResult, run_firmware
from kiln.memory.manifest import CORSTONE_300, manifest_paths, write_manifest

#: KILN_CORTEX_M_FLAVOUR values: what the Cortex-M55 build compiles its kernels for.
FLAVOURS = {"mve": "auto", "dsp": "dsp", "portable": "portable"}


@dataclass(frozen=True)
class FirmwareRun:
    """QEMU's result and the ELF it ran."""

    result: QemuResult
    elf: Path


def prepare_existing(pte: Path, inputs: Sequence[Path], expected: Sequence[Path], out: Path) -> PreparedProgram:
    """The memory manifest of an existing program, with its input and expected-output
    .npy files, ready for build_firmware."""
    out.mkdir(parents=True, exist_ok=True)
    arrays = [np.load(p) for p in inputs]
    manifest = write_manifest(pte, out, inputs=arrays, board=CORSTONE_300)
    json_path, header_path = manifest_paths(pte, out)
    return PreparedProgram(pte.stem, pte, manifest, Path(json_path), Path(header_path), list(inputs), list(expected))


def build_and_run(prepared: PreparedProgram, flavour: str, build_dir: Path, timeout: float = 300.0) -> FirmwareRun:
    """Builds ``prepared`` into Cortex-M55 firmware whose kernels are ``flavour`` (a key of
    FLAVOURS), linking only the program's kernels, and runs it on QEMU's mps3-an547.
    Reusing ``build_dir`` for another program recompiles only what differs."""
    elf = build_firmware(prepared, build_dir, locate_sources(), build_dir / "build.log", cpu="cortex-m55",
                         selective=True, cmake_args=[f"-DKILN_CORTEX_M_FLAVOUR={FLAVOURS[flavour]}"])
    return FirmwareRun(run_firmware(elf, timeout=timeout), elf)
