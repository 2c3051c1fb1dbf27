"""kiln.quantize: calibration, progress reporting, QAT, errors, and the one-trace export."""

from __future__ import annotations

import logging
import sys
from collections import Counter

import pytest
import torch
from torch import nn

import kiln
import kiln.models
from kiln import ExportError
from kiln.backends.arm import EthosUQuantizer
from kiln.quantize import QuantizationError
from kiln.export.edge import QUANTIZED_KEPT_WHOLE, core_aten_decompositions, export_core_aten
from kiln.quantize.driver import _has_training_behaviour

qd = torch.ops.quantized_decomposed


def _samples(shape: tuple[int, ...], count: int, seed: int, scale: float = 1.0) -> list[tuple[torch.Tensor]]:
    generator = torch.Generator().manual_seed(seed)
    return [(scale * torch.randn(shape, generator=generator),) for _ in range(count)]


def _activation_ranges(prepared: torch.fx.GraphModule) -> list[tuple[float, float]]:
    observers = [m for name, m in prepared.named_modules() if name.startswith("activation_post_process")
                 and hasattr(m, "min_val") and m.min_val.dim() == 0]
    return [(float(m.min_val), float(m.max_val)) for m in observers]


def test_calibration_sets_observer_ranges_and_shows_progress(caplog, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the log-line fallback (tqdm is optional)
    model, inputs = kiln.models.get("smallcnn")
    prepared = kiln.quantize.prepare(model, inputs, EthosUQuantizer())
    before = _activation_ranges(prepared)
    assert before and all(low == float("inf") for low, _ in before)  # nothing observed yet
    with caplog.at_level(logging.INFO, logger="kiln.quantize"):
        assert kiln.quantize.calibrate(prepared, _samples((1, 3, 32, 32), 3, seed=1)) == 3
    assert "calibrating: 3/3 samples" in caplog.text
    small = _activation_ranges(prepared)
    assert all(low < high for low, high in small)
    kiln.quantize.calibrate(prepared, _samples((1, 3, 32, 32), 2, seed=2, scale=4.0), progress=False)
    wide = _activation_ranges(prepared)
    # Min/max observers only grow; inputs 4x larger must widen the input range.
    assert all(w_low <= s_low and w_high >= s_high for (w_low, w_high), (s_low, s_high) in zip(wide, small))
    assert wide[0][1] > small[0][1]


def test_calibration_changes_the_quantized_model() -> None:
    model, inputs = kiln.models.get("smallcnn")
    narrow = kiln.quantize(model, inputs, EthosUQuantizer(), _samples((1, 3, 32, 32), 2, 1, 0.5), progress=False)
    wide = kiln.quantize(model, inputs, EthosUQuantizer(), _samples((1, 3, 32, 32), 2, 1, 2.0), progress=False)
    first = lambda p: next(n for n in p.graph.nodes if n.target == qd.quantize_per_tensor.default)  # noqa: E731
    assert first(wide).args[1] > 3 * first(narrow).args[1]  # input scale follows the calibration data


def test_empty_calibration_is_an_error() -> None:
    model, inputs = kiln.models.get("mlp")
    with pytest.raises(QuantizationError, match="calibration_data is empty"):
        kiln.quantize(model, inputs, EthosUQuantizer(), [], progress=False)


class DataDependent(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.sum() > 0 else x


def test_unexportable_model_raises_export_error() -> None:
    with pytest.raises(ExportError, match="torch.export failed for DataDependent"):
        kiln.quantize(DataDependent(), (torch.randn(1, 4),), EthosUQuantizer(), progress=False)


class TinyConvBn(nn.Module):
    """conv -> batch norm -> relu -> linear: the smallest model with a batch norm to fold."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 6 * 6, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))


def test_qat_one_step_then_convert() -> None:
    from torchao.quantization.pt2e import move_exported_model_to_eval

    torch.manual_seed(0)
    model, inputs = TinyConvBn().eval(), (torch.randn(1, 3, 6, 6),)
    prepared = kiln.quantize.prepare_qat(model, inputs, EthosUQuantizer(is_qat=True))
    assert model.training is False  # the user's model keeps its mode
    batch, labels = torch.randn(4, 3, 6, 6), torch.tensor([0, 1, 2, 3])
    optimizer = torch.optim.SGD(prepared.parameters(), lr=0.01)
    weights_before = [p.detach().clone() for p in prepared.parameters()]
    loss = nn.functional.cross_entropy(prepared(batch), labels)
    loss.backward()
    optimizer.step()
    assert any(not torch.equal(a, b) for a, b in zip(weights_before, prepared.parameters()))
    move_exported_model_to_eval(prepared)
    with torch.no_grad():
        fake_quantized = prepared(*inputs)
    program = kiln.quantize.convert(prepared)
    targets = Counter(str(n.target) for n in program.graph.nodes if n.op == "call_function")
    assert not any("batch_norm" in t for t in targets)
    assert targets["quantized_decomposed.dequantize_per_channel.default"] >= 3
    out = program.module()(*inputs)
    # Same qparams as the fake-quantized training graph: only folding/rounding order differs.
    output_scale = next(n for n in reversed(list(program.graph.nodes))
                        if n.target == qd.dequantize_per_tensor.default).args[1]
    assert float((out - fake_quantized).abs().max()) <= 4 * output_scale


class Attention(nn.Module):
    """q @ k^T over heads: transpose and reshape, which ATen IR traces to transpose.int
    and _unsafe_view (core ATen has neither)."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).reshape(1, 8, 3, 2, 8).permute(2, 0, 3, 1, 4)
        scores = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        return (scores @ v).transpose(1, 2).reshape(1, 8, 16)


def _upsampling() -> nn.Module:
    # upsample_nearest2d.vec: a composite op that core ATen keeps whole
    return nn.Sequential(nn.Conv2d(3, 4, 1), nn.Upsample(scale_factor=2), nn.Conv2d(4, 2, 3))


@pytest.mark.parametrize("name", ["resnet", "attention", "upsampling"])
def test_one_trace_export_equals_the_public_route(name: str) -> None:
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    if name == "resnet":
        model, inputs = kiln.models.get("resnet")
    else:
        torch.manual_seed(0)
        model = (Attention() if name == "attention" else _upsampling()).eval()
        inputs = (torch.randn(1, 8, 16) if name == "attention" else torch.randn(1, 3, 8, 8),)
    prepared = prepare_pt2e(torch.export.export(model, inputs).module(check_guards=False), EthosUQuantizer())
    prepared(*inputs)
    converted = convert_pt2e(prepared)
    fast = export_core_aten(converted, inputs, kept_whole=QUANTIZED_KEPT_WHOLE)
    public = torch.export.export(converted, inputs).run_decompositions(core_aten_decompositions(QUANTIZED_KEPT_WHOLE))
    ops = lambda p: Counter(str(n.target) for n in p.graph.nodes if n.op == "call_function")  # noqa: E731
    assert ops(fast) == ops(public)
    assert not any(str(t) in ("aten.arange.start_step", "aten.index.Tensor") for t in ops(fast))
    torch.testing.assert_close(fast.module()(*inputs), public.module()(*inputs), rtol=0, atol=0)


def test_only_a_graph_in_training_mode_is_switched_to_eval() -> None:
    model, inputs = TinyConvBn().eval(), (torch.randn(1, 3, 6, 6),)
    ptq = kiln.quantize.prepare(nn.Sequential(model, nn.Dropout()).eval(), inputs, EthosUQuantizer())
    qat = kiln.quantize.prepare_qat(nn.Sequential(model, nn.Dropout()), inputs, EthosUQuantizer(is_qat=True))
    assert not _has_training_behaviour(ptq.graph)
    assert _has_training_behaviour(qat.graph)
    program = kiln.quantize.convert(qat)  # switches dropout and batch norm to eval itself
    targets = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
    assert not any("dropout" in t or "batch_norm" in t for t in targets)
