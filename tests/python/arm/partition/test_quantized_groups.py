"""Quantized groups the lowering fuses are delegated whole: linear layers (addmm with a
transposed constant weight, views around it on rank-3 inputs), a decomposed hardswish
(x * clamp(x + 3, 0, 6) / 6 becomes one TABLE) and a multiply by a scalar. The
support checks judge each operator; the partitioner judges the quantization of the
group; the delegate's TOSA graph must match the quantized PyTorch model."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec
from kiln.backends.arm.partitioner import EthosUPartitioner

from .conftest import partition, quantize  # type: ignore[import-not-found]

TARGETS = ["ethos-u55-128", "ethos-u85-256"]


class LinearHardswish(nn.Module):
    """Linear on a rank-3 input (view -> addmm -> view), hardswish, a scaled linear."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(nn.functional.hardswish(self.fc1(x))) * 0.5


@pytest.fixture(scope="module")
def quantized_linear() -> tuple[torch.export.ExportedProgram, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    inputs = (torch.randn(1, 5, 8),)
    return quantize(LinearHardswish(), inputs), inputs


@pytest.mark.parametrize("target", TARGETS)
def test_linear_and_decomposed_hardswish_are_delegated_whole(quantized_linear, target: str) -> None:
    program, _ = quantized_linear
    compiled = kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    report = compiled.compile_report.partition_report
    cpu = [d for d in report.decisions if not d.delegated]
    assert [d.operator for d in cpu] == [
        "quantized_decomposed::quantize_per_tensor", "quantized_decomposed::dequantize_per_tensor",
    ], report.table()
    assert all(d.reason.startswith("boundary") for d in cpu)
    ops = {d.operator for d in report.decisions if d.delegated}
    assert {"aten::addmm", "aten::view", "aten::clamp", "aten::div.Tensor"} <= ops, ops
    [delegate] = compiled.compile_report.delegates
    assert delegate.preprocessed.tosa.op_counts.get("TABLE", 0) == 2  # hardswish and * 0.5
    assert delegate.report.npu_cycles and delegate.report.npu_cycles > 0


def test_delegated_linear_matches_the_quantized_model(quantized_linear) -> None:
    """The TOSA reference model on the delegate vs the fake-quantized PyTorch graph."""
    program, inputs = quantized_linear
    compiled = kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec("ethos-u55-128")))
    [delegate] = compiled.compile_report.delegates
    tosa = delegate.preprocessed.tosa
    [io_in], [io_out] = tosa.inputs, tosa.outputs
    x = torch.ops.quantized_decomposed.quantize_per_tensor(inputs[0], io_in.scale, io_in.zero_point, -128, 127,
                                                           torch.int8)
    [actual] = tosa.run_reference([x.numpy()])
    with torch.no_grad():
        expected = program.module()(*inputs)
    expected_q = torch.ops.quantized_decomposed.quantize_per_tensor(expected, io_out.scale, io_out.zero_point,
                                                                    -128, 127, torch.int8)
    difference = np.abs(actual.astype(np.int32) - expected_q.numpy().astype(np.int32))
    assert difference.max() <= 2, difference.max()


def test_a_float_value_inside_a_group_keeps_the_group_on_the_cpu() -> None:
    """mul feeds add without a quantize node between them: each operator is lowerable,
    the group as quantized is not (the integer graph has no float intermediate)."""
    from kiln.backends.arm.tosa.support import group_problem, is_lowerable

    def dq(x: torch.Tensor) -> torch.Tensor:
        return torch.ops.quantized_decomposed.dequantize_per_tensor(x, 0.05, 0, -128, 127, torch.int8)

    def q(x: torch.Tensor) -> torch.Tensor:
        return torch.ops.quantized_decomposed.quantize_per_tensor(x, 0.05, 0, -128, 127, torch.int8)

    class MulAdd(nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            x, y = dq(q(a)), dq(q(b))
            return dq(q(x * y + x))

    inputs = (torch.randn(1, 4, 3, 3), torch.randn(1, 4, 3, 3))
    program = kiln.export_to_edge(MulAdd(), inputs)
    graph_module, result = partition(program, "ethos-u55-128")
    nodes = [n for n in graph_module.graph.nodes if n.op == "call_function" and "quantize" not in str(n.target)]
    spec = EthosUCompileSpec("ethos-u55-128")
    assert all(is_lowerable(n, spec) == (True, "") for n in nodes)
    problem = group_problem(nodes, spec)
    assert problem is not None and "without a quantize node" in problem and "mul" in problem
    assert not result.partitions
    decisions = [d for d in result.report.decisions if d.operator in ("aten::mul.Tensor", "aten::add.Tensor")]
    assert len(decisions) == 2
    for decision in decisions:
        assert not decision.delegated and "without a quantize node" in decision.reason
