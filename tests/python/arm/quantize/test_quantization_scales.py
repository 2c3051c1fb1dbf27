"""Quantization scales a program can run with: a calibration that measures an infinite range
fails when the model is quantized, naming the node, and values that can hold an infinity by
construction (attention masks written with -inf) are left float instead of quantized."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.quantize import QuantizationScaleError


def _quantizer():
    from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer

    return EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"))


class LogOfRelu(nn.Module):
    """log(0) = -inf wherever the ReLU clips: an infinity only calibration can see."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(torch.log(torch.relu(x)))


class MaskedScores(nn.Module):
    """Scores with an additive padding mask (0 or -inf), then a softmax: the mask and the
    masked scores hold -inf by construction."""

    def __init__(self) -> None:
        super().__init__()
        self.query = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        q = self.query(x)
        scores = q @ x.transpose(1, 2)
        mask = torch.zeros(padding.shape).masked_fill(padding, float("-inf"))
        return torch.softmax(scores + mask[:, None, :], dim=-1)


def _samples(count: int = 3) -> list[tuple[torch.Tensor, ...]]:
    rng = np.random.default_rng(0)
    return [(torch.from_numpy(rng.standard_normal((2, 8)).astype(np.float32)),) for _ in range(count)]


def test_infinite_calibrated_range_fails_at_quantization_naming_the_node() -> None:
    torch.manual_seed(0)
    samples = _samples()
    with pytest.raises(QuantizationScaleError) as caught:
        kiln.quantize(LogOfRelu().eval(), samples[0], _quantizer(), samples, progress=False)
    error = caught.value
    assert error.node == "log" and math.isinf(error.scale)
    assert "node 'log' (aten::log" in str(error) and "infinite scale" in str(error)
    assert "test_quantization_scales.py" in str(error)  # the model's line that made the node


def test_a_program_with_an_infinite_scale_does_not_compile() -> None:
    torch.manual_seed(0)
    samples = _samples()
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU()).eval()
    quantized = kiln.quantize(model, samples[0], _quantizer(), samples, progress=False)
    quantize = next(n for n in quantized.graph.nodes if "quantize_per_tensor" in str(n.target)
                    and "dequantize" not in str(n.target) and n.args[0].op != "placeholder")
    quantize.args = (quantize.args[0], float("inf"), *quantize.args[2:])  # as another tool's calibration might
    with pytest.raises(QuantizationScaleError) as caught:
        kiln.export(quantized)
    assert caught.value.node == quantize.args[0].name


def test_a_mask_that_hides_with_minus_infinity_stays_float() -> None:
    from kiln.runtime import Runtime

    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    padding = torch.from_numpy(rng.random((2, 6)) < 0.3)
    padding[:, 0] = False  # every row keeps a score
    samples = [(torch.from_numpy(rng.standard_normal((2, 6, 8)).astype(np.float32)), padding) for _ in range(3)]
    quantized = kiln.quantize(MaskedScores().eval(), samples[0], _quantizer(), samples, progress=False)
    scales = [float(n.args[1]) for n in quantized.graph.nodes if "quantize_per_tensor" in str(n.target)]
    assert scales and all(math.isfinite(s) and s > 0 for s in scales)
    program = kiln.export(quantized)
    x, mask = samples[1]
    (got,) = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x.numpy(), mask.numpy()])
    with torch.no_grad():
        expected = quantized.module()(x, mask).numpy()
    assert np.abs(got - expected).max() <= 1.0 / 256 + 1e-6  # one step of the softmax's fixed output
