"""Zoo CNNs compiled by Kiln's Cortex-M flow (CortexMQuantizer + cortex_m:: lowering) run on
the Cortex-M55 firmware in QEMU (mps3-an547, Helium kernels): the firmware compares its
outputs with the host runtime's (kiln.runtime, portable flavour of the same kernels) and
exits 0 only if every byte agrees. One selective firmware build, reused by each program.
No kernel takes memory from the runner's temp allocator: each scratch tensor the compiler
sizes holds at least what a kernel cannot do without (one gathered window). Whether it also
holds the Helium product's buffers only changes the speed (the kernels make do without
them), which benchmarks/cortex_m.py measures (its pointwise 8->16 shape)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import kiln
import kiln.models
from kiln.backends.cortex_m import CortexMLowering, CortexMQuantizer
from kiln.cli.aot import calibration_samples
from kiln.deploy.cortex_m import build_and_run, prepare_existing
from kiln.runtime import Runtime

pytestmark = pytest.mark.slow



class FewChannels(nn.Module):
    """Layers whose products are shallower than one Helium vector (depth 3 to 27) or whose
    channel counts are not multiples of 16: a 3x3 conv on 3 channels, 1x1 convs 5->8 and
    8->5, a depthwise conv on 5 channels and a transposed conv 5->3."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 5, 3, padding=1)
        self.expand = nn.Conv2d(5, 8, 1)
        self.project = nn.Conv2d(8, 5, 1)
        self.depthwise = nn.Conv2d(5, 5, 3, padding=1, groups=5)
        self.up = nn.ConvTranspose2d(5, 3, 2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.stem(x))
        x = self.depthwise(self.project(torch.relu(self.expand(x))))
        return self.up(x)


MODELS = ("smallcnn", "dscnn", "few_channels")
_TEMP_ALLOCATOR = re.compile(r"temp allocator: \d+ / \d+ bytes used, \d+ free \(peak (\d+)\)")


def _model(name: str) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    if name == "few_channels":
        torch.manual_seed(5)
        return FewChannels().eval(), (torch.randn(1, 3, 12, 10),)
    return kiln.models.load(name)


def _compile(name: str, folder: Path) -> tuple[Path, list[Path], list[Path]]:
    """The program, its input .npy files and the host runtime's outputs for them."""
    model, inputs = _model(name)
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
        peaks = _TEMP_ALLOCATOR.findall(run.result.output)
        assert peaks and all(p == "0" for p in peaks), f"{name}: kernels took temp memory: {peaks}"
