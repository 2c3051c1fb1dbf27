"""Tensors with a batch above 1 run on the NPU where the lowering folds the batch into
another dimension (partitioner/batch.py): softmax rows, 1-D and pointwise convolutions,
pointwise functions. A convolution whose kernel reads several rows keeps its batch and stays
on the CPU with the reason."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
from kiln.runtime import Runtime

TARGETS = ["ethos-u55-128", "ethos-u85-256"]
BOUNDARY = "boundary:"


class BatchedFrames(nn.Module):
    """Four utterances of 16 frames: pointwise and depthwise 1-D convolutions, a scale, a
    softmax over the frames of a 4-D view."""

    def __init__(self) -> None:
        super().__init__()
        self.pointwise = nn.Conv1d(8, 16, 1)
        self.depthwise = nn.Conv1d(16, 16, 5, padding=2, groups=16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.depthwise(torch.relu(self.pointwise(x)))) * 0.5
        return torch.softmax(x.view(4, 2, 8, 16), dim=-1)


class BatchedImages(nn.Sequential):
    """Three images through a 1x1 and a 1x3 convolution (each output row reads one input row)."""

    def __init__(self) -> None:
        super().__init__(nn.Conv2d(4, 8, 1), nn.ReLU(), nn.Conv2d(8, 8, (1, 3), padding=(0, 1)))


MODELS = {"frames": (BatchedFrames, (4, 8, 16)), "images": (BatchedImages, (3, 4, 5, 6))}


@pytest.fixture(scope="module")
def quantized() -> Any:
    cache: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in cache:
            make, shape = MODELS[name]
            torch.manual_seed(0)
            rng = np.random.default_rng(0)
            samples = [(torch.from_numpy(rng.standard_normal(shape).astype(np.float32)),) for _ in range(3)]
            quantizer = EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"))
            cache[name] = kiln.quantize(make().eval(), samples[0], quantizer, samples, progress=False), samples
        return cache[name]

    return get


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_batch_folds_and_runs_like_quantized_pytorch(quantized: Any, name: str, target: str) -> None:
    program, samples = quantized(name)
    compiled = kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    report = compiled.compile_report.partition_report
    left = [(d.node, d.reason) for d in report.rejections() if not d.reason.startswith(BOUNDARY)]
    assert not left, left
    assert len(report.partitions) == 1
    (x,) = samples[1]
    (got,) = Runtime().load_program(compiled.to_bytes()).load_method("forward").execute([x.numpy()])
    with torch.no_grad():
        expected = program.module()(x).numpy()
    step = next(float(n.args[1]) for n in reversed(program.graph.nodes) if "dequantize" in str(n.target))
    assert np.abs(got - expected).max() / step <= 1 + 1e-3


def test_a_kernel_over_several_rows_keeps_the_batch_on_the_cpu() -> None:
    torch.manual_seed(0)
    inputs = (torch.randn(2, 4, 6, 6),)
    model = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU()).eval()
    program = kiln.quantize(model, inputs, EthosUQuantizer(EthosUCompileSpec("ethos-u55-128")), progress=False)
    compiled = kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec("ethos-u85-256")))
    [conv] = [d for d in compiled.compile_report.partition_report.decisions if d.operator == "aten::convolution"]
    assert not conv.delegated and "batch 2" in conv.reason and "cannot fold the batch" in conv.reason
