"""aten.as_strided in the Cortex-M int8 flow: a restride of a row-major tensor is an int8
view; any other read keeps its float portable kernel (as_strided_copy) between its
dequantize and quantize, and the report says why. Programs match the quantized PyTorch
model within one output step."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

import kiln
from kiln.backends.cortex_m import CortexMLowering, CortexMQuantizer, to_cortex_m
from kiln.runtime import Runtime

SCALE = 0.05


def q(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.quantized_decomposed.quantize_per_tensor(x, SCALE, 0, -128, 127, torch.int8)


def dq(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.quantized_decomposed.dequantize_per_tensor(x, SCALE, 0, -128, 127, torch.int8)


class QuantizedRestride(nn.Module):
    """An int8 tensor restrided (q/dq spelled out, as a graph the rewrite has not seen)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dq(q(torch.as_strided(dq(q(x)), (2, 12), (12, 1))))


class Frames(nn.Module):
    """Overlapping windows (hop 2, width 4) of a convolution's output rows."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x))  # [1, 3, 1, 16]
        return torch.as_strided(y, (1, 3, 7, 4), (48, 16, 2, 1))


def _int8_views(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    return [n for n in graph.nodes if n.target is torch.ops.aten.view.default and n.meta["val"].dtype == torch.int8]


def test_a_restride_becomes_an_int8_view() -> None:
    program = torch.export.export(QuantizedRestride(), (torch.randn(4, 6),)).run_decompositions()
    _, graph, report = to_cortex_m(program)
    assert not [n for n in graph.graph.nodes if n.target is torch.ops.aten.as_strided.default]
    assert len(_int8_views(graph.graph)) == 1
    assert "aten::as_strided" not in report.portable


def _quantized_frames():
    torch.manual_seed(0)
    model, x = Frames().eval(), torch.randn(1, 2, 1, 16)
    samples = [(torch.randn(1, 2, 1, 16, generator=torch.Generator().manual_seed(i)),) for i in range(4)]
    return kiln.quantize(model, (x,), CortexMQuantizer(), samples, progress=False), x


def test_a_gather_runs_on_its_portable_kernel_with_a_reason() -> None:
    quantized, x = _quantized_frames()
    lowering = CortexMLowering()
    program = kiln.export(quantized, cpu_lowering=lowering)
    assert lowering.report.portable["aten::as_strided"] == 1
    assert "a gather, not a reshape" in lowering.report.reasons["aten::as_strided"]
    assert "a gather, not a reshape" in lowering.report.line()
    assert any(op.startswith("cortex_m::") for op in program.operators)
    (got,) = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x])
    output = quantized.graph.output_node().args[0][0]
    want = quantized.module()(x).numpy()
    assert np.abs(np.asarray(got) - want).max() <= float(output.args[1]) * 1.01
