"""Per-layer precision chosen from measurement (kiln.backends.arm.quantizer.choice): the layers
that matter most move to 16-bit activations until a stated error against eager fp32 is met,
at a cost (Vela's NPU cycles) below all-a16w8's; a budget that cannot be met says so."""

from __future__ import annotations

import logging

import pytest
import torch

from kiln.backends.arm import EthosUCompileSpec
from kiln.backends.arm.quantizer.choice import PrecisionTargetError, candidate_layers, choose_precision


class Stack(torch.nn.Module):
    """Three convolutions; the middle one has a wide output range (a few large weights), so
    int8 rounds its small outputs coarsely: the layer that gains most from 16 bits."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(4, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.conv3 = torch.nn.Conv2d(16, 8, 3, padding=1)
        with torch.no_grad():
            self.conv2.weight[:2] *= 40.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv3(torch.relu(self.conv2(torch.relu(self.conv1(x)))))


@pytest.fixture(scope="module")
def setting() -> tuple[torch.nn.Module, tuple[torch.Tensor], list[tuple[torch.Tensor]]]:
    logging.getLogger("torchao").setLevel(logging.ERROR)
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    samples = [(torch.randn(1, 4, 24, 24, generator=generator),) for _ in range(4)]
    return Stack().eval(), samples[0], samples


def test_candidates_are_the_weighted_layers_with_what_follows(setting) -> None:
    model, inputs, _ = setting
    layers = candidate_layers(model, inputs)
    assert [layer.name for layer in layers] == ["conv1", "conv2", "conv3"]
    assert all(layer.module_type == "Conv2d" for layer in layers)


def test_the_choice_meets_the_target_below_all_a16w8_cost(setting) -> None:
    model, inputs, samples = setting
    spec = EthosUCompileSpec("ethos-u55-128")
    probe = choose_precision(model, inputs, samples, spec, max_error=1e-9, candidates=[])
    target = probe.a16w8_error + 0.5 * (probe.int8_error - probe.a16w8_error)
    choice = choose_precision(model, inputs, samples, spec, max_error=target)
    print(choice.table())
    assert choice.target_met and choice.error <= target < choice.int8_error
    assert 0 < len([row for row in choice.layers if row.precision == "int16"]) < len(choice.layers)
    assert choice.npu_cycles is not None and choice.a16w8_npu_cycles is not None
    assert choice.npu_cycles < choice.a16w8_npu_cycles
    assert choice.layers[0].gain == max(row.gain for row in choice.layers)  # ordered by gain
    assert "met" in choice.summary and "conv2" in choice.table()
    # all-a16w8 stays above a quarter of int8's error: the report says the int8 weights are why
    # (their error with fp32 activations, measured on eager PyTorch, is a16w8's)
    assert choice.a16w8_error > choice.int8_error / 4
    assert choice.weights_error is not None and choice.weights_error >= 0.8 * choice.a16w8_error
    assert any("the int8 weights set the floor" in line for line in choice.limits)
    assert "limit: " in choice.table()


def test_a_budget_that_cannot_be_met_says_so(setting) -> None:
    model, inputs, samples = setting
    spec = EthosUCompileSpec("ethos-u55-128")
    choice = choose_precision(model, inputs, samples, spec, max_error=1e-9, max_npu_cycles=1)
    assert not choice.target_met and "NOT met, best found" in choice.summary
    assert choice.int16_modules == [] and choice.error == choice.int8_error
    assert all(row.note.startswith("undone:") for row in choice.layers if row.error_after is not None)


def test_bad_targets_and_names_are_named_errors(setting) -> None:
    model, inputs, samples = setting
    spec = EthosUCompileSpec("ethos-u55-128")
    with pytest.raises(PrecisionTargetError, match="max_error must be a positive number"):
        choose_precision(model, inputs, samples, spec, max_error=0.0)
    with pytest.raises(PrecisionTargetError, match="no 16-bit candidate layer named conv9"):
        choose_precision(model, inputs, samples, spec, max_error=0.1, candidates=["conv9"])
