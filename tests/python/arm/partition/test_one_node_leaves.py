"""One operator the NPU cannot run leaves the delegate alone: the quantizer quantizes an
operator it has no rule for at its own inputs and output, so the CPU gets it between a
dequantize and a quantize node, and the layout operators around it (which share their
producer's quantization) stay on the NPU. The report names that one node and why."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.export.evaluate import output_lsb
from kiln.passes.delegation import is_dequantize
from kiln.runtime import Runtime

from .conftest import quantize  # type: ignore[import-not-found]


class FlipInTheMiddle(nn.Module):
    """linear, relu, flip (no Ethos-U lowering), reshape/permute/reshape, residual add, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(16, 16)
        self.second = nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.first(x))
        z = torch.flip(y, [-1]).reshape(1, 4, 4, 4).permute(0, 2, 1, 3).reshape(1, 4, 16)
        return self.second(z + y)


@pytest.fixture(scope="module")
def flipped() -> tuple[torch.export.ExportedProgram, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    inputs = (torch.randn(1, 4, 16),)
    return quantize(FlipInTheMiddle(), inputs), inputs


@pytest.mark.parametrize("target", ["ethos-u55-128", "ethos-u85-256"])
def test_only_the_unsupported_node_leaves(flipped, target: str) -> None:
    program, inputs = flipped
    compiled = kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    report = compiled.compile_report.partition_report
    cpu_compute = [d for d in report.rejections() if "quantize_per_" not in d.operator]
    assert [(d.node, d.operator) for d in cpu_compute] == [("flip", "aten::flip")]
    assert "aten::flip" in cpu_compute[0].reason and "together with" not in cpu_compute[0].reason
    for operator in ("aten::permute", "aten::addmm", "aten::add.Tensor"):
        assert all(d.delegated for d in report.decisions if d.operator == operator), operator
    # flip reads a dequantized tensor and its result is quantized at once.
    flip = next(n for n in program.graph.nodes if n.name == "flip")
    assert is_dequantize(flip.args[0])
    assert all("quantize_per_tensor" in str(user.target) for user in flip.users)
    got = Runtime().load_program(compiled.to_bytes()).load_method("forward").execute([x.numpy() for x in inputs])
    with torch.no_grad():
        expected = program.module()(*inputs).numpy()
    [step] = output_lsb(program.graph)
    worst = float(np.max(np.abs(np.asarray(got[0], np.float64) - expected))) / step
    assert worst <= 1.0 + 1e-3, f"{worst:.2f} LSB from the quantized PyTorch model"
