"""aten.as_strided in XNNPACK delegates: a restride of a row-major tensor is a static reshape
there (fp32 and int8); any other read stays on the CPU's as_strided_copy kernel with its
reason in the partition report. Programs run on Kiln's runtime and match eager PyTorch
(the quantized model's PyTorch reference for int8)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.backends.xnnpack import XnnpackPartitioner, XnnpackQuantizer
from kiln.export import delegate_partitions, lower_edge_program, program_from_methods
from kiln.passes.delegation import constant_tensors, copy_graph_module
from kiln.runtime import Runtime

SCALE = 0.05


def q(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.quantized_decomposed.quantize_per_tensor(x, SCALE, 0, -128, 127, torch.int8)


def dq(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.quantized_decomposed.dequantize_per_tensor(x, SCALE, 0, -128, 127, torch.int8)


def _cnn() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(8, 5)).eval()


class Frames(nn.Module):
    """Overlapping windows of a signal: no reshape of it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.as_strided(torch.relu(x), (7, 4), (2, 1)))


class QuantizedRestride(nn.Module):
    """An int8 restride (q/dq spelled out) feeding a float sigmoid."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(dq(q(torch.as_strided(dq(q(x)), (2, 12), (12, 1)))))


def _channels_last(model: nn.Module, x: torch.Tensor) -> tuple[nn.Module, tuple[torch.Tensor]]:
    """The model and input as a channels-last user runs them: torch.export restrides the pool."""
    return model.to(memory_format=torch.channels_last), (x.contiguous(memory_format=torch.channels_last),)


def _decisions(program: torch.export.ExportedProgram, operator: str):
    result = XnnpackPartitioner().partition(copy_graph_module(program), constant_tensors(program))
    return [d for d in result.report.decisions if d.operator == operator]


def test_a_restride_is_a_reshape_in_the_delegate() -> None:
    """On a graph the rewrite has not seen (the partitioner's own judgement)."""
    program = torch.export.export(*_channels_last(_cnn(), torch.randn(1, 3, 6, 6))).run_decompositions()
    [restride] = _decisions(program, "aten::as_strided")
    assert restride.delegated, restride.reason


def test_a_gather_stays_on_the_cpu_with_its_reason() -> None:
    program = torch.export.export(Frames().eval(), (torch.randn(16),)).run_decompositions()
    [gather] = _decisions(program, "aten::as_strided")
    assert not gather.delegated and "XNNPACK has no strided gather" in gather.reason


@pytest.mark.parametrize("model, x", [(_cnn(), torch.randn(1, 3, 6, 6)), (QuantizedRestride(), torch.randn(4, 6))],
                         ids=["fp32", "int8"])
def test_a_restride_left_in_the_graph_runs_in_the_delegate(model: nn.Module, x: torch.Tensor) -> None:
    """The partitioner's and the lowering's own handling, on a program the rewrite has not
    seen (the staged API: partition, lower, emit)."""
    model, inputs = _channels_last(model, x) if x.dim() == 4 else (model, (x,))
    program = torch.export.export(model, inputs).run_decompositions()
    graph_module, report = delegate_partitions(program, XnnpackPartitioner())
    assert [d.delegated for d in report.partition_report.decisions if d.operator == "aten::as_strided"] == [True]
    assert len(report.delegates) == 1
    method = Runtime().load_program(program_from_methods([lower_edge_program(program, graph_module=graph_module)])
                                    .to_bytes()).load_method("forward")
    (got,) = method.execute([inputs[0]])
    with torch.no_grad():
        want = model(*inputs).numpy()
    assert np.abs(np.asarray(got) - want).max() <= 1e-5


def _output_step(program: torch.export.ExportedProgram) -> float:
    """The quantization step of the program's (dequantized) output."""
    output = program.graph.output_node().args[0][0]
    assert output.target is torch.ops.quantized_decomposed.dequantize_per_tensor.default
    return float(output.args[1])


@pytest.mark.parametrize("flavour", ["fp32", "int8"])
def test_channels_last_cnn_runs_in_one_delegate(flavour: str) -> None:
    """What users get: kiln.export turns the restride into a view the delegate takes."""
    model, inputs = _channels_last(_cnn(), torch.randn(1, 3, 6, 6))
    tolerance = 1e-5
    if flavour == "int8":
        samples = [(torch.randn(1, 3, 6, 6, generator=torch.Generator().manual_seed(i)),) for i in range(8)]
        model = kiln.quantize(model, inputs, XnnpackQuantizer(), samples, progress=False)
        tolerance = _output_step(model) * 1.01  # XNNPACK requantizes in fixed point, PyTorch in float
    program = kiln.export(model, None if flavour == "int8" else inputs, partitioner=XnnpackPartitioner())
    report = program.compile_report.partition_report
    assert len(program.compile_report.delegates) == 1, report.table()
    (got,) = Runtime().load_program(program.to_bytes()).load_method("forward").execute([inputs[0]])
    with torch.no_grad():
        want = (model.module() if flavour == "int8" else model)(*inputs).numpy()
    assert np.abs(np.asarray(got) - want).max() <= tolerance
