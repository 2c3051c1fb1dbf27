"""Vela's limits known before Vela runs (kiln.backends.arm.tosa.vela_limits).

The Ethos-U55 transposes only the three innermost axes of a batch-1 tensor, and Vela
decomposes any other transpose into 3-D ones whose axes must stay within 2**16; a
transpose it cannot decompose stops the whole compile ("Non-passthrough operation
(Transpose) could not run on NPU"). Kiln predicts that refusal; the prediction is
checked against Vela itself on single TRANSPOSE graphs, and the partitioner uses it so
that a Wav2Letter-style model is split up front with the reason in the report instead
of by trying Vela on ever smaller subgraphs.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import tosa_serializer as ts
from torch import nn

import kiln
from kiln import KilnError
from kiln.backends.arm import EthosUCompileSpec
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.backends.arm.tosa.builder import TosaBuilder, attribute
from kiln.backends.arm.tosa.vela_limits import transpose_objection
from kiln.backends.arm.vela import compile_tosa
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
    one of them widening to 256 channels over 511 steps, and a log-softmax head. On the
    Ethos-U55 the convolutions on [2, 256, 511] need transposes that merge 511 x 256 axes
    (above 2**16): Vela refuses them."""

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


@pytest.fixture(scope="module")
def wav2letter() -> tuple[torch.export.ExportedProgram, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    inputs = (torch.randn(2, 1, 1024),)
    return quantize(Wav2LetterStyle(), inputs), inputs


@pytest.mark.slow
def test_wav2letter_style_is_split_by_the_partitioner_on_u55(wav2letter) -> None:
    program, inputs = wav2letter
    compiled = kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec(U55)))
    report = compiled.compile_report.partition_report
    assert report.splits == [], "Vela rejected a subgraph that the partitioner let through"
    refused = {d.node: d.reason for d in report.rejections() if d.operator == "aten::convolution"}
    assert refused, "the wide convolutions should stay on the CPU on ethos-u55"
    for node, reason in refused.items():
        assert reason.startswith("Vela would refuse it: Vela cannot transpose"), (node, reason)
        assert "(it runs a transpose as 3-D transposes with every axis at most 65536)" in reason
    delegated = [d for d in report.decisions if d.operator == "aten::convolution" and d.delegated]
    assert len(delegated) >= 3, "the narrow convolutions stay on the NPU"
    assert len(compiled.compile_report.delegates) == len(report.partitions)
    # The program runs: the delegates on the virtual NPU, the refused layers on the CPU.
    got = Runtime().load_program(compiled.to_bytes()).load_method("forward").execute([x.numpy() for x in inputs])
    expected = program.module()(*inputs).detach().numpy()
    assert np.asarray(got[0]).shape == expected.shape
    assert np.all(np.isfinite(np.asarray(got[0])))


@pytest.mark.slow
def test_wav2letter_style_convolutions_all_run_on_u85(wav2letter) -> None:
    program, _ = wav2letter
    compiled = kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec(U85)))
    report = compiled.compile_report.partition_report
    assert report.splits == []
    assert not [d for d in report.rejections() if d.operator == "aten::convolution"]
