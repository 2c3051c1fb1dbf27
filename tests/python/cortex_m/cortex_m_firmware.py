"""Builds the runner firmware for a given .pte with a chosen Cortex-M kernel flavour and
runs it in QEMU (shared by the firmware tests and benchmarks/cortex_m.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from kiln.deploy.firmware import build_firmware, locate_sources
from kiln.deploy.prepare import PreparedProgram
from kiln.deploy.qemu import QemuResult, run_firmware
from kiln.memory.manifest import CORSTONE_300, manifest_paths, write_manifest

#: KILN_CORTEX_M_FLAVOUR values: what the Cortex-M55 build compiles its kernels for.
FLAVOURS = {"mve": "auto", "dsp": "dsp", "portable": "portable"}


@dataclass(frozen=True)
class FirmwareRun:
    result: QemuResult
    elf: Path


def prepare(pte: Path, inputs: Sequence[Path], expected: Sequence[Path], out: Path) -> PreparedProgram:
    """The manifest and embedded files of an existing program (no kiln-aot)."""
    out.mkdir(parents=True, exist_ok=True)
    arrays = [np.load(p) for p in inputs]
    manifest = write_manifest(pte, out, inputs=arrays, board=CORSTONE_300)
    json_path, header_path = manifest_paths(pte, out)
    return PreparedProgram(pte.stem, pte, manifest, Path(json_path), Path(header_path), list(inputs), list(expected))


def build_and_run(prepared: PreparedProgram, flavour: str, build_dir: Path, timeout: float = 300.0) -> FirmwareRun:
    """Builds `prepared` into Cortex-M55 firmware whose kernels are `flavour` (FLAVOURS)
    and runs it on QEMU's mps3-an547."""
    elf = build_firmware(prepared, build_dir, locate_sources(), build_dir / "build.log", cpu="cortex-m55",
                         cmake_args=[f"-DKILN_CORTEX_M_FLAVOUR={FLAVOURS[flavour]}"])
    return FirmwareRun(run_firmware(elf, timeout=timeout), elf)
