"""EthosUQuantizer on the shapes beyond CNNs: transposed convolutions, GRU/LSTM layers
(unrolled over time before annotation), upsampling, embeddings, sums.

Expected values come from eager PyTorch (the layers themselves, their weights) and from the
definitions of the scheme."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
from kiln.delegation.quantizer.recurrent import unroll_recurrent_layers

sys.path.insert(0, str(Path(__file__).parent))
qdq = importlib.import_module("qdq_graph")
sys.path.pop(0)

aten = torch.ops.aten
qd = torch.ops.quantized_decomposed


def _quantize(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> torch.export.ExportedProgram:
    generator = torch.Generator().manual_seed(3)
    samples = [tuple(torch.randn(x.shape, generator=generator) if x.is_floating_point() else x for x in inputs)
               for _ in range(3)]
    quantizer = EthosUQuantizer(EthosUCompileSpec("ethos-u85-256"))
    return kiln.quantize(model.eval(), inputs, quantizer, samples, progress=False)


class Recurrent(nn.Module):
    def __init__(self, kind: str, layers: int, batch_first: bool) -> None:
        super().__init__()
        self.rnn = (nn.GRU if kind == "gru" else nn.LSTM)(6, 10, num_layers=layers, batch_first=batch_first)

    def forward(self, x: torch.Tensor, *state: torch.Tensor):
        if not state:
            return self.rnn(x)
        return self.rnn(x, state[0] if isinstance(self.rnn, nn.GRU) else tuple(state))


@pytest.mark.parametrize("kind", ["gru", "lstm"])
@pytest.mark.parametrize("layers, batch_first, given_state", [(1, True, False), (2, False, True)])
def test_unrolled_recurrent_layer_computes_what_the_layer_computes(kind: str, layers: int, batch_first: bool,
                                                                     given_state: bool) -> None:
    torch.manual_seed(0)
    model = Recurrent(kind, layers, batch_first).eval()
    x = torch.randn((2, 5, 6) if batch_first else (5, 2, 6))
    state = (torch.randn(layers, 2, 10),) * (1 if kind == "gru" else 2) if given_state else ()
    module = torch.export.export(model, (x, *state), strict=False).module(check_guards=False)
    unrolled = unroll_recurrent_layers(module)
    targets = {n.target for n in unrolled.graph.nodes if n.op == "call_function"}
    assert aten.gru.input not in targets and aten.lstm.input not in targets
    assert {aten.linear.default, aten.sigmoid.default, aten.tanh.default} <= targets
    expected = model(x, *state)
    actual = unrolled(x, *state)
    flat = lambda values: [v for item in values for v in (item if isinstance(item, tuple) else (item,))]  # noqa: E731
    for a, e in zip(flat(actual), flat(expected)):
        torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-6)


def test_bidirectional_layer_is_left_whole() -> None:
    model = nn.GRU(4, 8, bidirectional=True, batch_first=True).eval()
    module = torch.export.export(model, (torch.randn(1, 3, 4),), strict=False).module(check_guards=False)
    unrolled = unroll_recurrent_layers(module)
    assert any(n.target == aten.gru.input for n in unrolled.graph.nodes)


@pytest.mark.slow
def test_quantized_gru_has_quantized_gates() -> None:
    class Classifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gru = nn.GRU(6, 10, batch_first=True)
            self.head = nn.Linear(10, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.gru(x)[0][:, -1])

    torch.manual_seed(0)
    program = _quantize(Classifier(), (torch.randn(1, 4, 6),))
    sigmoids = qdq.nodes(program, aten.sigmoid.default)
    assert len(sigmoids) == 2 * 4  # reset and update gates, four steps
    assert all(qdq.output_qparams(n) == (1 / 256, -128) for n in sigmoids)
    assert all(qdq.output_qparams(n) == (1 / 128, 0) for n in qdq.nodes(program, aten.tanh.default))
    # The hidden-state projection is a quantized fully connected layer at every step.
    weights = [n for n in qdq.nodes(program, qd.dequantize_per_channel.default) if n.args[-1] == torch.int8]
    assert len(weights) >= 3


def test_transposed_convolution_weights_are_per_output_channel_along_axis_1() -> None:
    torch.manual_seed(0)
    model = nn.ConvTranspose2d(6, 4, 4, stride=2, padding=1).eval()
    program = _quantize(model, (torch.randn(1, 6, 5, 5),))
    conv = qdq.nodes(program, aten.convolution.default)[0]
    assert conv.args[6] is True  # transposed
    weight_dq = conv.args[1]
    weight, scale = qdq.constant(program, weight_dq.args[0]), qdq.constant(program, weight_dq.args[1])
    assert weight_dq.args[3] == 1 and weight.shape == (6, 4, 4, 4) and scale.numel() == 4
    per_output_channel = model.weight.detach().abs().amax(dim=(0, 2, 3))
    torch.testing.assert_close(scale.float() * 127, per_output_channel, rtol=1e-5, atol=1e-7)


class Upsample(nn.Module):
    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.interpolate(x, scale_factor=2, mode=self.mode)


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_upsampling_keeps_its_input_quantization(mode: str) -> None:
    program = _quantize(Upsample(mode), (torch.randn(1, 3, 4, 4),))
    # The quantized flow keeps interpolate whole (upsample_*2d.vec) or, through core ATen's
    # decomposition, spells it as index reads with computed indices: both read one input.
    upsamplings = [n for n in program.graph.nodes if n.op == "call_function" and n.target in (
        aten.index.Tensor, aten.upsample_nearest2d.vec, aten.upsample_bilinear2d.vec)]
    assert upsamplings, "no upsampling node in the quantized program"
    source = upsamplings[0].args[0]
    assert source.target == qd.dequantize_per_tensor.default
    output = program.graph.output_node().args[0][0]
    assert output.target == qd.dequantize_per_tensor.default
    assert (float(output.args[1]), int(output.args[2])) == (float(source.args[1]), int(source.args[2]))


def test_embedding_result_shares_the_table_quantization() -> None:
    model = nn.Sequential(nn.Embedding(20, 8), nn.Linear(8, 4))
    program = _quantize(model, (torch.randint(0, 20, (1, 5), dtype=torch.int32),))
    embedding = qdq.nodes(program, aten.embedding.default)[0]
    table = embedding.args[0]
    assert table.target == qd.dequantize_per_tensor.default
    assert qdq.output_qparams(embedding) == (float(table.args[1]), int(table.args[2]))


def test_sum_output_is_observed() -> None:
    class Sum(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.sum(dim=1)

    program = _quantize(Sum(), (torch.randn(1, 6, 5),))
    node = qdq.nodes(program, aten.sum.dim_IntList)[0]
    scale_in, _ = qdq.input_qparams(node)
    scale_out, _ = qdq.output_qparams(node)
    assert scale_out > 1.2 * scale_in  # observed: a sum of six spans a wider range than its inputs
