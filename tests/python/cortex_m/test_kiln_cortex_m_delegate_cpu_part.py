"""Ethos-U programs whose CPU part (the input quantize, the output dequantize, operators the
NPU does not take) is lowered to cortex_m:: kernels: they run in Kiln's runtime (the NPU on
the virtual Ethos-U) and agree with the quantized PyTorch model within one output step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
from kiln.backends.cortex_m import CortexMLowering
from kiln.export.evaluate import output_lsb
from kiln.runtime import Runtime

pytestmark = pytest.mark.slow


class ConvHead(nn.Module):
    """Convolutions for the NPU; the float input and output meet it on the CPU."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2, groups=8))
        self.head = nn.Linear(8 * 7 * 7, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x).flatten(1))


@pytest.mark.parametrize("target", ["ethos-u55-128", "ethos-u85-256"])
def test_cpu_part_on_cortex_m_kernels(target: str, tmp_path: Path) -> None:
    torch.manual_seed(3)
    model = ConvHead().eval()
    rng = np.random.default_rng(5)
    samples = [(torch.from_numpy(rng.standard_normal((1, 3, 16, 16)).astype(np.float32)),) for _ in range(4)]
    spec = EthosUCompileSpec(target)
    quantized = kiln.quantize(model, samples[0], EthosUQuantizer(spec), samples, progress=False)
    lowering = CortexMLowering()
    program = kiln.export(quantized, partitioner=EthosUPartitioner(spec), cpu_lowering=lowering)
    assert lowering.report is not None
    assert lowering.report.cortex_m["cortex_m::quantize_per_tensor"] == 1, lowering.report.line()
    assert lowering.report.cortex_m["cortex_m::dequantize_per_tensor"] == 1, lowering.report.line()
    assert not lowering.report.portable, lowering.report.line()
    path = tmp_path / "model.pte"
    program.save(path)
    x = samples[1][0]
    got = np.asarray(Runtime().load_program(path.read_bytes()).load_method("forward").execute([x])[0])
    with torch.no_grad():
        expected = quantized.module()(x).numpy()
    steps = np.abs(got - expected) / output_lsb(quantized.graph)[0]
    assert steps.max() <= 1 + 1e-3, f"{target}: {steps.max():.2f} steps from the quantized model"
