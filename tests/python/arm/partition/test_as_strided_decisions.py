"""aten.as_strided on the Ethos-U: a restride of a row-major tensor is a RESHAPE on the NPU;
any other read (overlapping windows: a gather) stays on the CPU's as_strided_copy kernel
with its reason in the partition report, and the program still compiles and runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.runtime import Runtime

from .conftest import dq, partition, q, quantize  # type: ignore[import-not-found]

TARGETS = ["ethos-u55-128", "ethos-u85-256"]


class RestridedGlobalPool(nn.Module):
    """What torch.export makes of a channels-last global pool, q/dq spelled out: the
    ``as_strided`` is between the mean and its quantize, as in a converted program."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pooled = dq(q(x)).mean(dim=(2, 3), keepdim=True)
        return dq(q(torch.as_strided(pooled, (1, 8, 1, 1), (8, 1, 8, 8)).flatten(1)))


class Frames(nn.Module):
    """Overlapping windows (hop 2, width 4) of the first half of each channel, between two
    convolutions (a read of some values only: its quantization must still be its input's)."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Conv2d(2, 4, 1)
        self.second = nn.Conv2d(4, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.first(x))                         # [1, 4, 1, 16]
        frames = torch.as_strided(y, (1, 4, 3, 4), (64, 16, 2, 1))
        return self.second(frames)


def _decisions(result, operator: str):
    return [d for d in result.report.decisions if d.operator == operator]


@pytest.mark.parametrize("target", TARGETS)
def test_a_restride_is_delegated_as_a_reshape(target: str) -> None:
    """Given a graph the rewrite has not seen (the backend's own judgement)."""
    program = torch.export.export(RestridedGlobalPool(), (torch.randn(1, 8, 5, 5),)).run_decompositions()
    _, result = partition(program, target)
    [restride] = _decisions(result, "aten::as_strided")
    assert restride.delegated, restride.reason
    assert len(result.partitions) == 1


@pytest.fixture(scope="module")
def frames_program() -> torch.export.ExportedProgram:
    torch.manual_seed(0)
    return quantize(Frames(), (torch.randn(1, 2, 1, 16),))


def test_the_quantizer_gives_a_gather_its_input_quantization(frames_program) -> None:
    """Annotated as a shape op: its result shares its input's observer (the converted
    program then has the same qparams on both sides, as the NPU and CPU copies need)."""
    from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec

    from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer

    prepared = kiln.quantize.prepare(Frames().eval(), (torch.randn(1, 2, 1, 16),),
                                     EthosUQuantizer(EthosUCompileSpec(TARGETS[0])))
    [gather] = [n for n in prepared.graph.nodes if n.target is torch.ops.aten.as_strided.default]
    annotation = gather.meta.get("quantization_annotation")
    assert annotation is not None and isinstance(annotation.output_qspec, SharedQuantizationSpec)
    [gather] = [n for n in frames_program.graph.nodes if n.target is torch.ops.aten.as_strided.default]
    before, [after] = gather.args[0], list(gather.users)
    assert before.target is torch.ops.quantized_decomposed.dequantize_per_tensor.default
    assert after.target is torch.ops.quantized_decomposed.quantize_per_tensor.default
    assert before.args[1:] == after.args[1:]  # scale, zero point, range, dtype


@pytest.mark.parametrize("target", TARGETS)
def test_a_gather_stays_on_the_cpu_with_its_reason(frames_program, target: str) -> None:
    _, result = partition(frames_program, target)
    [gather] = _decisions(result, "aten::as_strided")
    assert not gather.delegated
    assert "a gather, not a reshape" in gather.reason and "as_strided_copy" in gather.reason
    assert all(d.delegated for d in _decisions(result, "aten::convolution"))
    assert len(result.partitions) == 2  # one convolution on either side of the CPU's gather


@pytest.mark.parametrize("target", TARGETS)
def test_a_program_with_a_gather_runs(frames_program, target: str) -> None:
    """The NPU and CPU parts together give the quantized model's result (within one
    output step: TOSA and PyTorch round the convolutions' rescales differently)."""
    from kiln.backends.arm import EthosUCompileSpec
    from kiln.backends.arm.partitioner import EthosUPartitioner

    program = kiln.export(frames_program, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    assert "aten::as_strided_copy.out" in program.operators
    x = torch.randn(1, 2, 1, 16, generator=torch.Generator().manual_seed(1))
    (got,) = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x])
    want = frames_program.module()(x)
    output_quantize = next(n for n in reversed(list(frames_program.graph.nodes))
                           if n.target is torch.ops.quantized_decomposed.quantize_per_tensor.default)
    step = output_quantize.args[1]
    assert np.abs(np.asarray(got) - want.numpy()).max() <= step * 1.01
