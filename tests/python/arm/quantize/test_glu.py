"""nn.GLU is quantized piece by piece (quantizer/glu.py): its halves, sigmoid and product each
get their own quantization, so the whole gate runs on the NPU of every target."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
from kiln.runtime import Runtime

TARGETS = ["ethos-u55-128", "ethos-u85-256"]


class GatedConvolution(nn.Sequential):
    """A Conformer convolution module's gate: pointwise convolution to twice the channels, GLU."""

    def __init__(self) -> None:
        super().__init__(nn.Conv1d(8, 16, 1), nn.GLU(dim=1), nn.Conv1d(8, 8, 3, padding=1))


@pytest.fixture(scope="module")
def quantized() -> tuple[torch.export.ExportedProgram, list[tuple[torch.Tensor]]]:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    samples = [(torch.from_numpy(rng.standard_normal((1, 8, 20)).astype(np.float32)),) for _ in range(3)]
    quantizer = EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"))
    return kiln.quantize(GatedConvolution().eval(), samples[0], quantizer, samples, progress=False), samples


def test_the_sigmoid_and_the_product_are_quantized(quantized) -> None:
    program, _ = quantized
    quantized_results = {n.args[0].target for n in program.graph.nodes
                         if n.op == "call_function" and str(n.target).endswith("quantize_per_tensor.default")
                         and "dequantize" not in str(n.target) and isinstance(n.args[0], torch.fx.Node)}
    assert {torch.ops.aten.sigmoid.default, torch.ops.aten.mul.Tensor} <= quantized_results


@pytest.mark.parametrize("target", TARGETS)
def test_the_gate_is_one_delegate_and_runs_like_quantized_pytorch(quantized, target: str) -> None:
    program, samples = quantized
    compiled = kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    report = compiled.compile_report.partition_report
    assert [d.reason for d in report.rejections() if not d.reason.startswith("boundary:")] == []
    assert len(report.partitions) == 1
    (x,) = samples[1]
    (got,) = Runtime().load_program(compiled.to_bytes()).load_method("forward").execute([x.numpy()])
    with torch.no_grad():
        expected = program.module()(x).numpy()
    step = next(float(n.args[1]) for n in reversed(program.graph.nodes) if "dequantize" in str(n.target))
    assert np.abs(got - expected).max() / step <= 1 + 1e-3
