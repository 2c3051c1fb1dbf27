"""Vela's limits known before Vela runs (kiln.backends.arm.tosa.vela_limits).

The Ethos-U55 transposes only the three innermost axes of a batch-1 tensor, and Vela
decomposes any other transpose into 3-D ones whose axes must stay within 2**16; a
transpose it cannot decompose stops the whole compile ("Non-passthrough operation
(Transpose) could not run on NPU"). Kiln predicts that refusal; the prediction is
checked against Vela itself on single TRANSPOSE graphs. The lowering avoids a refused transpose where
the same data movement without size-1 axes is allowed (a Wav2Letter-style model, which
Vela used to reject and Kiln split by trial, is now one delegate on the U55), and the
partitioner leaves what remains on the CPU with the reason in the report, before Vela runs
(no trial split).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import tosa_serializer as ts
from torch import nn

import kiln
from kiln import KilnError, _runtime
from kiln.backends.arm import EthosUCompileSpec
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.backends.arm.tosa.builder import TosaBuilder, attribute
from kiln.backends.arm.tosa.vela_limits import transpose_objection
from kiln.backends.arm.vela import compile_tosa
from kiln.export.evaluate import output_lsb
from kiln.runtime import Runtime

from .conftest import quantize  # type: ignore[import-not-found]

U55 = "ethos-u55-128"
U85 = "ethos-u85-256"

# (shape, permutation): batch above 1, rank 5, long merged axes, swaps Vela does in one
# operation and ones it decomposes; about half of them Vela refuses.
TRANSPOSES = [
    ([2, 1, 511, 256], [0, 3, 1, 2]),  # a batch-2 1-D convolution's output back to [N, C, L]
    ([2, 256, 1, 511], [0, 2, 3, 1]),  # and its input to channels-last
    ([2, 256, 511], [0, 2, 1]),
    ([1, 256, 511], [0, 2, 1]),
    ([1, 1, 300, 300], [0, 1, 3, 2]),
    ([1, 300, 300, 1], [0, 2, 1, 3]),
    ([3, 100, 700], [0, 2, 1]),
    ([3, 100, 700], [1, 0, 2]),
    ([2, 300, 256], [1, 0, 2]),
    ([3, 300, 256], [2, 1, 0]),
    ([5, 130, 511], [1, 2, 0]),
    ([1, 16, 300, 700], [0, 3, 1, 2]),
    ([1, 16, 300, 700], [0, 2, 3, 1]),
    ([2, 3, 64, 700], [0, 2, 1, 3]),
    ([2, 3, 64, 700], [1, 3, 0, 2]),
    ([2, 2, 3, 130, 300], [0, 4, 2, 3, 1]),
    ([130, 1, 1, 1, 511], [0, 2, 4, 3, 1]),  # only size-1 axes move
    ([1, 70000, 2], [0, 2, 1]),  # an axis above 2**16
    ([2, 300, 300, 2], [0, 3, 2, 1]),  # HeadsOfABatch below
]


def _vela_accepts(shape: list[int], perm: list[int], dtype: ts.DType) -> bool:
    builder = TosaBuilder()
    source = builder.add_input(shape, dtype)
    result = builder.op(ts.Op.TRANSPOSE, [source], [shape[p] for p in perm], dtype,
                        attribute("Transpose", list(perm)), "transposed")
    builder.mark_output(result)
    try:
        compile_tosa(builder.serialize(), EthosUCompileSpec(U55), name="transpose")
    except KilnError:
        return False
    return True


@pytest.mark.parametrize("bits", [8, 16])
def test_transpose_limits_agree_with_vela(bits: int) -> None:
    dtype = ts.DType.INT8 if bits == 8 else ts.DType.INT16
    verdicts = []
    for shape, perm in TRANSPOSES:
        refused = transpose_objection(shape, perm, bits, U55)
        accepted = _vela_accepts(shape, perm, dtype)
        assert accepted == (refused is None), (
            f"{shape} by {perm}, {bits}-bit: Vela {'accepts' if accepted else 'refuses'} it, Kiln predicted "
            f"{refused or 'acceptance'}")
        verdicts.append(accepted)
    assert 3 <= verdicts.count(False) <= len(verdicts) - 3, "the cases must hold both outcomes"


def test_no_transpose_limit_is_claimed_for_u85() -> None:
    assert transpose_objection([2, 1, 511, 256], [0, 3, 1, 2], 8, U85) is None


class Wav2LetterStyle(nn.Module):
    """torchaudio's Wav2Letter in miniature: 1-D convolutions over a batch of 2 waveforms,
    one of them widening to 256 channels over 511 steps, and a log-softmax head. The
    lowering runs a 1-D convolution as a 2-D one on [N, C, 1, L]; with N = 2 the transposes
    to and from channels-last are 4-D ones that merge 511 x 256 axes on the Ethos-U55 (Vela
    refused them, and Kiln split the model by trial), while the same data movement without
    the size-1 axis is a 3-D transpose the NPU does in one operation."""

    def __init__(self) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Conv1d(1, 64, 48, stride=2, padding=23), nn.ReLU()]
        for _ in range(2):
            layers += [nn.Conv1d(64, 64, 7, padding=3), nn.ReLU()]
        layers += [nn.Conv1d(64, 256, 32, padding=15), nn.ReLU(), nn.Conv1d(256, 256, 1), nn.ReLU(),
                   nn.Conv1d(256, 29, 1), nn.ReLU()]
        self.acoustic_model = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.log_softmax(self.acoustic_model(x), dim=1)


class HeadsOfABatch(nn.Module):
    """A batch of 2 feature maps [2, 2, 300, 300] permuted to [2, 300, 2, 300] between two
    activations: on the Ethos-U55 that is a 4-D transpose whose decomposition merges
    300 x 300 axes, which Vela cannot run; the U85 can."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.relu(x * 2.0).permute(0, 2, 1, 3) - 0.5)


def _compiled(model: nn.Module, shape: tuple[int, ...], target: str) -> tuple[Any, Any, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    inputs = (torch.randn(shape),)
    program = quantize(model, inputs)
    return program, kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec(target))), inputs


def _runs_like_quantized_pytorch(program: Any, compiled: Any, inputs: tuple[torch.Tensor, ...]) -> float:
    """Largest difference of the program (delegates on the virtual NPU) from the quantized
    PyTorch model, in output steps."""
    got = Runtime().load_program(compiled.to_bytes()).load_method("forward").execute([x.numpy() for x in inputs])
    with torch.no_grad():
        expected = program.module()(*inputs).numpy()
    [step] = output_lsb(program.graph)
    return float(np.max(np.abs(np.asarray(got[0], np.float64) - expected))) / step


@pytest.mark.slow
@pytest.mark.parametrize("target", [U55, U85])
def test_wav2letter_style_convolutions_all_run_on_the_npu(target: str) -> None:
    program, compiled, inputs = _compiled(Wav2LetterStyle(), (2, 1, 1024), target)
    report = compiled.compile_report.partition_report
    assert report.splits == [], "Vela rejected a subgraph that the partitioner let through"
    cpu_compute = [d.operator for d in report.rejections() if "quantize_per_" not in d.operator]
    assert cpu_compute == ["aten::_log_softmax"] or cpu_compute == [], cpu_compute
    [delegate] = compiled.compile_report.delegates
    pre = delegate.preprocessed
    rng = np.random.default_rng(0)
    npu_inputs = [rng.integers(-128, 128, size=io.shape).astype(np.int8) for io in pre.tosa.inputs]
    outputs = [np.zeros(io.shape, dtype=np.int8) for io in pre.tosa.outputs]
    _runtime.ethos_u_run_payload(pre.blob, [(k, bytes(v)) for k, v in pre.compile_specs], npu_inputs, outputs)
    for got, expected in zip(outputs, pre.tosa.run_reference(npu_inputs)):
        np.testing.assert_array_equal(got, expected.reshape(got.shape))
    assert _runs_like_quantized_pytorch(program, compiled, inputs) <= 1.0 + 1e-3


@pytest.mark.slow
def test_a_transpose_vela_refuses_is_split_off_by_the_partitioner() -> None:
    program, compiled, inputs = _compiled(HeadsOfABatch(), (2, 2, 300, 300), U55)
    report = compiled.compile_report.partition_report
    assert report.splits == [], "Vela rejected a subgraph that the partitioner let through"
    [refused] = [d for d in report.rejections() if "quantize_per_" not in d.operator]
    assert refused.operator == "aten::permute"
    assert refused.reason.startswith("Vela would refuse it: Vela cannot transpose [2, 300, 300, 2] by [0, 3, 2, 1]")
    assert "every axis at most 65536" in refused.reason
    assert len(compiled.compile_report.delegates) == 2  # the activations before and after it
    assert _runs_like_quantized_pytorch(program, compiled, inputs) <= 1.0 + 1e-3

    _, on_u85, _ = _compiled(HeadsOfABatch(), (2, 2, 300, 300), U85)
    assert not on_u85.compile_report.partition_report.rejections() or all(
        "quantize_per_" in d.operator for d in on_u85.compile_report.partition_report.rejections())
    assert len(on_u85.compile_report.delegates) == 1
