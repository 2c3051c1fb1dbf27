"""A padding mask computed from an int32 ``lengths`` input, on the Ethos-U85: the comparison,
the ``where`` that makes it additive and the masked softmax (with PyTorch's guard for rows
the mask hides entirely) all run on the NPU, in one delegate.

One small attention layer (``nn.MultiheadAttention`` with a key-padding mask, how speech
encoders pad a batch of utterances), quantized from the ``nn.Module``; run on Kiln's runtime
with the delegate on the virtual NPU against the quantized PyTorch model, with lengths from 0
(every key hidden: PyTorch's safe softmax gives 0 there, and so must the NPU) to the full
width.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
from kiln.runtime import Runtime

FRAMES, BATCH, DIM = 8, 4, 16
# The NPU's integer softmax against PyTorch's float one between quantize/dequantize pairs.
MAX_LSB, MEAN_LSB = 3.0, 0.5


class PaddedAttention(nn.Module):
    """forward(features (batch, frames, dim), lengths (batch,) int32) -> (batch, frames, dim)."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(DIM)  # as in a Conformer layer (and a contiguous input for the projections)
        self.attention = nn.MultiheadAttention(DIM, 4)

    def forward(self, features: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        padding = torch.arange(features.shape[1], dtype=lengths.dtype).expand(features.shape[:2]) >= lengths[:, None]
        x = self.norm(features.transpose(0, 1))
        x, _ = self.attention(x, x, x, key_padding_mask=padding, need_weights=False)
        return x.transpose(0, 1)


def _sample(rng: np.random.Generator, lengths: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    features = rng.standard_normal((BATCH, FRAMES, DIM)).astype(np.float32)
    return torch.from_numpy(features), torch.tensor(lengths, dtype=torch.int32)


@pytest.fixture(scope="module")
def compiled() -> tuple[torch.export.ExportedProgram, kiln.Program]:
    logging.getLogger("torchao").setLevel(logging.ERROR)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    samples = [_sample(rng, [FRAMES, 5, 3, 7]), _sample(rng, [FRAMES, 1, 6, 2])]
    spec = EthosUCompileSpec("ethos-u85-256")
    quantized = kiln.quantize(PaddedAttention().eval(), samples[0], EthosUQuantizer(spec), samples, progress=False)
    return quantized, kiln.export(quantized, partitioner=EthosUPartitioner(spec))


def test_the_mask_and_the_masked_softmax_are_delegated(compiled) -> None:
    _, program = compiled
    report = program.compile_report.partition_report
    assert len(report.partitions) == 1, report.table()
    cpu = [d.operator for d in report.rejections() if not d.operator.startswith("quantized_decomposed::")]
    assert cpu == [], report.table()
    delegated = report.partitions[0].operator_counts
    assert {"aten::ge.Tensor", "aten::where.self", "aten::_softmax", "aten::any.dim"} <= set(delegated)
    assert "lengths" in report.partitions[0].inputs


@pytest.mark.parametrize("lengths", [[0, FRAMES, 4, 0], [1, 2, FRAMES, 5]], ids=["fully_masked_rows", "partial"])
def test_program_matches_quantized_pytorch(compiled, lengths: list[int]) -> None:
    quantized, program = compiled
    features, lengths_tensor = _sample(np.random.default_rng(sum(lengths)), lengths)
    (got,) = Runtime().load_program(program.to_bytes()).load_method("forward").execute(
        [features.numpy(), lengths_tensor.numpy()])
    with torch.no_grad():
        expected = quantized.module()(features, lengths_tensor).numpy()
    assert np.isfinite(expected).all()  # PyTorch's guard: 0, not NaN, where every key is hidden
    result = next(n for n in reversed(quantized.graph.nodes) if n.op == "output").args[0][0]
    lsb = np.abs(np.asarray(got, np.float64) - expected) / float(result.args[1])
    assert lsb.max() <= MAX_LSB and lsb.mean() <= MEAN_LSB, (lsb.max(), lsb.mean())
