"""Models and inputs written the way users write them compile for the Ethos-U and run:
``nn.Sequential`` (its forward argument is named ``input``, a Python builtin), example
inputs made from numpy arrays (unit dimensions with any stride, slices of a batch),
and a delegate whose input is another delegate's output (``--evaluate`` follows the
values by name)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.export.evaluate import evaluate_delegated
from kiln.runtime import Runtime

TARGET = "ethos-u55-128"


def _sequential() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 4 * 4, 10),
    ).eval()


def _numpy_inputs() -> dict[str, torch.Tensor]:
    """1x1x8x8 inputs as users make them from numpy (never .clone()d or made contiguous)."""
    rng = np.random.default_rng(0)
    nhwc = rng.standard_normal((1, 8, 8, 1)).astype(np.float32)
    batch = rng.standard_normal((16, 8, 8, 1)).astype(np.float32)
    rgb = rng.standard_normal((1, 8, 8, 3)).astype(np.float32)
    return {
        "nhwc transposed": torch.from_numpy(nhwc.transpose(0, 3, 2, 1)),  # strides (64, 1, 1, 8)
        "nhwc permuted": torch.from_numpy(nhwc).permute(0, 3, 1, 2),  # strides (64, 1, 8, 1)
        "slice of a batch": torch.from_numpy(batch).permute(0, 3, 1, 2)[5:6],  # storage offset 320
        "one channel of rgb": torch.from_numpy(rgb[..., 1:2]).permute(0, 3, 1, 2),  # not dense
        "new axes": torch.from_numpy(nhwc[0, :, :, 0])[None, None],
    }


def _quantize(model: nn.Module, inputs: tuple[torch.Tensor, ...], quantizer: EthosUQuantizer | None = None):
    logging.getLogger("torchao").setLevel(logging.ERROR)
    quantizer = quantizer or EthosUQuantizer(EthosUCompileSpec(TARGET))
    return kiln.quantize(model, inputs, quantizer, [inputs], progress=False)


def _max_lsb(got: np.ndarray, want: torch.Tensor, step: float) -> float:
    return float(np.abs(np.asarray(got, np.float64) - want.numpy().astype(np.float64)).max()) / step


def _last_step(quantized) -> float:
    output = next(n for n in reversed(quantized.graph.nodes) if n.op == "output")
    return float(output.args[0][0].args[1])


def test_quantized_sequential_compiles_for_the_npu_and_runs() -> None:
    """nn.Sequential.forward(input): the placeholder is named after a builtin."""
    model, x = _sequential(), torch.randn(1, 1, 8, 8)
    quantized = _quantize(model, (x,))
    assert [s.arg.name for s in quantized.graph_signature.input_specs if s.kind.name == "USER_INPUT"] == ["input"]
    program = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(TARGET)))
    assert program.compile_report.delegates
    [got] = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x.numpy()])
    with torch.no_grad():
        want = quantized.module()(x)
    assert _max_lsb(got, want, _last_step(quantized)) <= 2


@pytest.mark.parametrize("made", list(_numpy_inputs()))
def test_numpy_made_example_input_quantizes_compiles_and_runs(made: str) -> None:
    x = _numpy_inputs()[made]
    model = _sequential()
    fp32 = kiln.export(model, (x,))
    [got] = Runtime().load_program(fp32.to_bytes()).load_method("forward").execute([x.numpy()])
    with torch.no_grad():
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-5, atol=1e-5)
    quantized = _quantize(model, (x,))
    for partitioner in (None, EthosUPartitioner(EthosUCompileSpec(TARGET))):
        program = kiln.export(quantized, partitioner=partitioner)
        [got] = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x.numpy()])
        with torch.no_grad():
            assert _max_lsb(got, quantized.module()(x.clone()), _last_step(quantized)) <= 2


class FloatBetweenDelegates(nn.Module):
    """conv -> (float linear on the CPU) -> conv, plus a skip from the first conv to the
    add after the second: the second delegate reads the first delegate's output."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Conv2d(4, 8, 3, padding=1)
        self.in_float = nn.Linear(8, 8)
        self.second = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.first(x))
        z = self.in_float(y.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.second(z) + y


def test_evaluate_follows_a_delegate_fed_by_another_delegate() -> None:
    torch.manual_seed(0)
    model, x = FloatBetweenDelegates().eval(), torch.randn(1, 4, 8, 8)
    quantizer = EthosUQuantizer(EthosUCompileSpec(TARGET)).set_module_name("in_float", None)
    quantized = _quantize(model, (x,), quantizer)
    program = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(TARGET)))
    report = program.compile_report
    assert len(report.delegates) == 2
    first, second = report.delegates
    assert set(first.output_nodes) & set(second.input_nodes), "the second delegate should read the first's output"
    node_names = {n.name for n in quantized.graph.nodes}
    assert set(second.input_nodes) <= node_names  # named as in the program, not after a selector node
    with torch.no_grad():
        evaluation = evaluate_delegated(quantized, report, (x,), [model(x)])
    assert all(max(d.max_lsb) <= 1 for d in evaluation.delegates), evaluation.lines()
    assert evaluation.outputs[0].max_lsb_vs_quantized is not None and evaluation.outputs[0].max_lsb_vs_quantized <= 1


class ConvThenSequence(nn.Module):
    """A 1-D convolution over [N, C, T] features, transposed to [N, T, C] for a layer that
    reads channels last: a Linear or a GRU (keyword spotting front ends write it so)."""

    def __init__(self, reader: str) -> None:
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(10, 16, 3, padding=1), nn.ReLU())
        self.reader = nn.GRU(16, 16, batch_first=True) if reader == "gru" else nn.Linear(16, 16)
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.reader(self.conv(x).transpose(1, 2))
        y = y[0] if isinstance(y, tuple) else y
        return self.head(y[:, -1])


@pytest.mark.parametrize("reader", ["linear", "gru"])
def test_a_layer_on_a_transposed_convolution_output_stays_on_the_npu(reader: str) -> None:
    """torch writes a Linear on a transposed input as a batched product with the weight
    repeated (no copy of the input); Kiln writes it as one fully connected layer, so the
    whole model is one delegate."""
    from kiln.backends.arm.vnpu import reference_mismatches

    torch.manual_seed(0)
    model = ConvThenSequence(reader).eval()
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 10, 12)).astype(np.float32))
    quantized = _quantize(model, (x,))
    program = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(TARGET)))
    report = program.compile_report
    on_cpu = [(d.node, d.reason) for d in report.partition_report.decisions
              if not d.delegated and not d.reason.startswith("boundary")]
    assert len(report.delegates) == 1 and not on_cpu, on_cpu
    assert not reference_mismatches(report.delegates)
    [got] = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x.numpy()])
    with torch.no_grad():
        assert _max_lsb(got, quantized.module()(x), _last_step(quantized)) <= 1
