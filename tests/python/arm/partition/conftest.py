"""Quantized graphs for the partitioner tests.

Two kinds: small models quantized by kiln.quantize with the Ethos-U quantizer (what
users get), and graphs that spell their quantize/dequantize nodes out, for shapes a
quantizer would not produce on its own (an operator no check knows, a path that
leaves a partition and comes back).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torchao.quantization.pt2e  # noqa: F401  (registers the quantized_decomposed ops)

import kiln
from kiln.passes.delegation import constant_tensors, copy_graph_module, duplicate_shared_dequantize

SCALE = 0.05


def q(x: torch.Tensor, scale: float = SCALE) -> torch.Tensor:
    return torch.ops.quantized_decomposed.quantize_per_tensor(x, scale, 0, -128, 127, torch.int8)


def dq(x: torch.Tensor, scale: float = SCALE) -> torch.Tensor:
    return torch.ops.quantized_decomposed.dequantize_per_tensor(x, scale, 0, -128, 127, torch.int8)


class UnknownOperator(nn.Module):
    """relu (NPU) -> cumsum (no check knows it) -> relu (NPU), each quantized."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = dq(q(torch.relu(dq(q(x)))))
        y = dq(q(torch.cumsum(y, dim=1)))
        return dq(q(torch.relu(y)))


class LeavesAndReturns(nn.Module):
    """``a`` feeds ``add`` directly and through a CPU-only cumsum: putting relu and add
    in one delegate would make it wait for its own output (a cycle)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = dq(q(torch.relu(dq(q(x)))))
        c = dq(q(torch.cumsum(a, dim=1)))
        return dq(q(torch.add(a, c)))


class StridedConv(nn.Module):
    """A stride-4 depthwise convolution: U85 runs it, U55/U65 take strides 1-3 only."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 4, stride=4, groups=8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def export_core_aten(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> torch.export.ExportedProgram:
    return kiln.export_to_edge(model.eval(), inputs)


def quantize(model: nn.Module, inputs: tuple[torch.Tensor, ...], target: str = "ethos-u55-128"):
    from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer

    generator = torch.Generator().manual_seed(0)
    samples = [tuple(torch.randn(x.shape, generator=generator) for x in inputs) for _ in range(4)]
    return kiln.quantize(model.eval(), inputs, EthosUQuantizer(EthosUCompileSpec(target)), samples, progress=False)


def partition(program: torch.export.ExportedProgram, target: str):
    """(graph module as the partitioner saw it, PartitionResult)."""
    from kiln.backends.arm import EthosUCompileSpec
    from kiln.backends.arm.partitioner import EthosUPartitioner

    graph_module = copy_graph_module(program)
    duplicate_shared_dequantize(graph_module.graph)
    result = EthosUPartitioner(EthosUCompileSpec(target)).partition(graph_module, constant_tensors(program))
    return graph_module, result


@pytest.fixture(scope="module")
def unknown_operator_program() -> torch.export.ExportedProgram:
    return export_core_aten(UnknownOperator(), (torch.randn(1, 8, 4, 4),))


@pytest.fixture(scope="module")
def cycle_program() -> torch.export.ExportedProgram:
    return export_core_aten(LeavesAndReturns(), (torch.randn(1, 8, 4, 4),))


@pytest.fixture(scope="module")
def strided_conv_program() -> torch.export.ExportedProgram:
    torch.manual_seed(0)
    return quantize(StridedConv(), (torch.randn(1, 8, 16, 16),))
