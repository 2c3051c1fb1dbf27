"""quantized_decomposed quantize/dequantize kernels (per tensor and per channel)
against PyTorch's reference implementation of those ops, bit for bit: int8, uint8,
int16, int32 and uint16, narrowed quant ranges, clamping, round-half-to-even ties,
zero points, every channel axis (negative too), float32 and float64 scales, float64
dequantize outputs, parameters held as constants or given at run time."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.testing import make_tensor

# Registers torch.ops.quantized_decomposed.* (the ops PT2E-quantized graphs call).
import torch.ao.quantization.fx._decomposed  # noqa: F401  isort: skip

qd = torch.ops.quantized_decomposed

QUANTIZE_PER_TENSOR = "quantized_decomposed::quantize_per_tensor.out"
DEQUANTIZE_PER_TENSOR = "quantized_decomposed::dequantize_per_tensor.out"
QUANTIZE_PER_CHANNEL = "quantized_decomposed::quantize_per_channel.out"
DEQUANTIZE_PER_CHANNEL = "quantized_decomposed::dequantize_per_channel.out"

# dtype -> (quant_min, quant_max) of the full range and of a narrowed range.
RANGES = {
    torch.int8: [(-128, 127), (-127, 127), (-8, 7)],
    torch.uint8: [(0, 255), (10, 200)],
    torch.int16: [(-32768, 32767), (-1000, 1000)],
    torch.int32: [(-(2**31) + 1, 2**31 - 1), (-100000, 100000)],
    torch.uint16: [(0, 65535)],
}


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def floats(shape, low=-4.0, high=4.0) -> torch.Tensor:
    return make_tensor(shape, dtype=torch.float32, device="cpu", low=low, high=high)


def ints(shape, dtype: torch.dtype, low: int, high: int) -> torch.Tensor:
    return torch.randint(low, high + 1, shape, dtype=torch.int64).to(dtype)


def test_quantize_per_tensor(check_op) -> None:
    """Every dtype and range; scales that clamp some values, zero points inside and at
    the range ends."""
    cases = []
    for dtype, (qmin, qmax) in ((d, r) for d, ranges in RANGES.items() for r in ranges):
        for scale, zero_point in ((0.05, 0), (0.013, qmin + 3), (1 / 1024, qmax - 1), (0.3, (qmin + qmax) // 2)):
            cases.append((
                f"{name_of(dtype)}[{qmin},{qmax}]_s{scale:.4g}_z{zero_point}",
                lambda x, s=scale, z=zero_point, lo=qmin, hi=qmax, d=dtype: qd.quantize_per_tensor(x, s, z, lo, hi, d),
                (floats((3, 17), -20, 20),),
            ))  # fmt: skip
    check_op.many(cases, ops=[QUANTIZE_PER_TENSOR], exact=True)


def test_quantize_rounds_half_to_even(check_op) -> None:
    """x / scale lands exactly on .5: ties go to the even integer, like torch.round."""
    halves = torch.arange(-10, 10, dtype=torch.float32) + 0.5
    cases = [
        (f"scale_{scale}", lambda x, s=scale: qd.quantize_per_tensor(x, s, 0, -128, 127, torch.int8), (halves * scale,))
        for scale in (0.25, 1.0, 2.0)
    ]
    cases.append(("zero_point_3", lambda x: qd.quantize_per_tensor(x, 0.5, 3, -128, 127, torch.int8), (halves * 0.5,)))
    check_op.many(cases, ops=[QUANTIZE_PER_TENSOR], exact=True)


def test_quantize_special_values(check_op) -> None:
    """Infinities clamp to the range ends; signed zeros go to the zero point."""
    x = torch.tensor([float("inf"), float("-inf"), 0.0, -0.0, 1e30, -1e30, 1e-30])
    cases = [
        (name_of(dtype), lambda t, d=dtype, r=RANGES[dtype][0]: qd.quantize_per_tensor(t, 0.1, 2 if r[0] == 0 else -2, r[0], r[1], d), (x,))
        for dtype in (torch.int8, torch.uint8, torch.int16)
    ]
    check_op.many(cases, ops=[QUANTIZE_PER_TENSOR], exact=True)


def test_dequantize_per_tensor(check_op) -> None:
    """Every dtype and range, float32 and float64 outputs."""
    cases = []
    for dtype, ranges in RANGES.items():
        for qmin, qmax in ranges:
            for scale, zero_point in ((0.05, 0), (0.0123, qmin + 3), (3.7, (qmin + qmax) // 2)):
                cases.append((
                    f"{name_of(dtype)}[{qmin},{qmax}]_s{scale}_z{zero_point}",
                    lambda q, s=scale, z=zero_point, lo=qmin, hi=qmax, d=dtype: qd.dequantize_per_tensor(q, s, z, lo, hi, d),
                    (ints((4, 9), dtype, qmin, qmax),),
                ))  # fmt: skip
        full = RANGES[dtype][0]
        cases.append((
            f"{name_of(dtype)}_float64_out",
            lambda t, r=full, d=dtype: qd.dequantize_per_tensor(t, 0.07, 1, *r, d, out_dtype=torch.float64),
            (ints((4, 9), dtype, *full),),
        ))  # fmt: skip
    check_op.many(cases, ops=[DEQUANTIZE_PER_TENSOR], exact=True)


def test_quantize_dequantize_round_trip(check_op) -> None:
    """The pattern PT2E graphs are made of: q -> dq around a float op."""

    def fake_quantized_relu(x: torch.Tensor) -> torch.Tensor:
        q = qd.quantize_per_tensor(x, 0.02, -5, -128, 127, torch.int8)
        y = torch.relu(qd.dequantize_per_tensor(q, 0.02, -5, -128, 127, torch.int8))
        return qd.quantize_per_tensor(y, 0.01, -128, -128, 127, torch.int8)

    check_op(fake_quantized_relu, (floats((2, 3, 8)),), ops=[QUANTIZE_PER_TENSOR, DEQUANTIZE_PER_TENSOR], exact=True)


class PerChannel(nn.Module):
    """Per-channel quantize or dequantize with scales and zero points held as buffers."""

    def __init__(self, quantize: bool, scales, zero_points, axis: int, qmin: int, qmax: int, dtype, out_dtype=None) -> None:
        super().__init__()
        self.register_buffer("scales", scales)
        self.register_buffer("zero_points", zero_points)
        self.quantize = quantize
        self.arguments = (axis, qmin, qmax, dtype)
        self.out_dtype = out_dtype

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.quantize:
            return qd.quantize_per_channel(x, self.scales, self.zero_points, *self.arguments)
        if self.out_dtype is not None:
            return qd.dequantize_per_channel(x, self.scales, self.zero_points, *self.arguments, out_dtype=self.out_dtype)
        return qd.dequantize_per_channel(x, self.scales, self.zero_points, *self.arguments)


def _channel_parameters(channels: int, scale_dtype: torch.dtype, qmin: int, qmax: int):
    scales = (torch.rand(channels, dtype=torch.float64) * 0.1 + 0.005).to(scale_dtype)
    zero_points = torch.randint(qmin, qmax + 1, (channels,), dtype=torch.int64)
    return scales, zero_points


# (input shape, axis): weights of conv (axis 0), linear (axis 0), activations (axis 1),
# last and negative axes.
CHANNEL_AXES = [((4, 3, 2, 2), 0), ((5, 6), 0), ((2, 3, 4), 1), ((2, 3, 5), -1), ((3, 4, 2), -2)]


@pytest.mark.parametrize("scale_dtype", [torch.float32, torch.float64], ids=name_of)
def test_quantize_per_channel(check_op, scale_dtype: torch.dtype) -> None:
    cases = []
    for dtype in (torch.int8, torch.uint8, torch.int16):
        qmin, qmax = RANGES[dtype][0]
        for shape, axis in CHANNEL_AXES:
            scales, zero_points = _channel_parameters(shape[axis], scale_dtype, qmin, (qmin + qmax) // 2)
            module = PerChannel(True, scales, zero_points, axis, qmin, qmax, dtype)
            cases.append((f"{name_of(dtype)}_{list(shape)}_axis{axis}", module, (floats(shape, -1, 1),)))
    check_op.many(cases, ops=[QUANTIZE_PER_CHANNEL], exact=True)


@pytest.mark.parametrize("scale_dtype", [torch.float32, torch.float64], ids=name_of)
def test_dequantize_per_channel(check_op, scale_dtype: torch.dtype) -> None:
    cases = []
    for dtype in (torch.int8, torch.uint8, torch.int32):
        qmin, qmax = RANGES[dtype][-1]
        for shape, axis in CHANNEL_AXES:
            scales, zero_points = _channel_parameters(shape[axis], scale_dtype, qmin, qmax)
            module = PerChannel(False, scales, zero_points, axis, qmin, qmax, dtype)
            cases.append((f"{name_of(dtype)}_{list(shape)}_axis{axis}", module, (ints(shape, dtype, qmin, qmax),)))
        scales, zero_points = _channel_parameters(4, scale_dtype, qmin, qmax)
        module = PerChannel(False, scales, zero_points, 0, qmin, qmax, dtype, out_dtype=torch.float64)
        cases.append((f"{name_of(dtype)}_float64_out", module, (ints((4, 3), dtype, qmin, qmax),)))
    check_op.many(cases, ops=[DEQUANTIZE_PER_CHANNEL], exact=True)


def test_per_channel_parameters_at_run_time(check_op) -> None:
    """Scales and zero points as method inputs (int32 zero points too)."""
    scales = torch.tensor([0.02, 0.5, 0.031])
    zero_points = torch.tensor([0, -3, 7], dtype=torch.int32)
    cases = [
        ("quantize", lambda x, s, z: qd.quantize_per_channel(x, s, z, 1, -128, 127, torch.int8), (floats((2, 3, 4)), scales, zero_points)),
        ("dequantize", lambda q, s, z: qd.dequantize_per_channel(q, s, z, 0, -128, 127, torch.int8), (ints((3, 5), torch.int8, -128, 127), scales, zero_points)),
    ]
    check_op.many(cases, ops=[QUANTIZE_PER_CHANNEL, DEQUANTIZE_PER_CHANNEL], exact=True)
