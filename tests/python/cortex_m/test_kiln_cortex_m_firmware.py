"""Zoo CNNs compiled by Kiln's Cortex-M flow (CortexMQuantizer + cortex_m:: lowering) run on
the Cortex-M55 firmware in QEMU (mps3-an547, Helium kernels): the firmware compares its
outputs with the host runtime's (kiln.runtime, portable flavour of the same kernels) and
exits 0 only if every byte agrees. One selective firmware build, reused by each program."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kiln
import kiln.models
from kiln.backends.cortex_m import CortexMLowering, CortexMQuantizer
from kiln.cli.aot import calibration_samples
from kiln.deploy.cortex_m import build_and_run, prepare_existing
from kiln.runtime import Runtime

pytestmark = pytest.mark.slow

MODELS = ("smallcnn", "dscnn")


def _compile(name: str, folder: Path) -> tuple[Path, list[Path], list[Path]]:
    """The program, its input .npy files and the host runtime's outputs for them."""
    model, inputs = kiln.models.load(name)
    quantized = kiln.quantize(model, inputs, CortexMQuantizer("cortex-m55"), calibration_samples(inputs, 4),
                              progress=False)
    pte = folder / f"{name}.pte"
    kiln.export(quantized, cpu_lowering=CortexMLowering()).save(pte)
    input_paths = []
    for i, x in enumerate(inputs):
        input_paths.append(folder / f"{name}_input_{i}.npy")
        np.save(input_paths[-1], x.numpy())
    outputs = Runtime().load_program(pte.read_bytes()).load_method("forward").execute(list(inputs))
    expected = []
    for i, y in enumerate(outputs):
        expected.append(folder / f"{name}_expected_{i}.npy")
        np.save(expected[-1], np.asarray(y))
    return pte, input_paths, expected


def test_zoo_models_on_firmware_equal_host_runtime(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("kiln_cortex_m_firmware")
    for name in MODELS:
        pte, inputs, expected = _compile(name, folder)
        prepared = prepare_existing(pte, inputs, expected, folder / name)
        run = build_and_run(prepared, "mve", folder / "build")
        assert run.result.exit_code == 0, f"{name}: {run.result.meaning}\n{run.result.output[-3000:]}"
        assert "bit for bit" in run.result.output, run.result.output[-2000:]
