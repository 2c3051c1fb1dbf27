"""Fixed-point parameters of the CMSIS-NN int8 arithmetic the ``cortex_m::`` kernels use.

A real factor ``m`` becomes ``(multiplier, shift)`` with ``m = multiplier * 2**(shift - 31)``
and ``multiplier`` in ``[2**30, 2**31)`` (TFLite's QuantizeMultiplier); the kernels then
compute ``round(x * m)`` in integers (kernels/cortex_m/util/requantize.h).
"""

from __future__ import annotations

import math

import torch

#: Left shift CMSIS-NN applies to both operands of an int8 add before scaling them.
ADD_LEFT_SHIFT = 20
#: Integer bits of the fixed-point input of CMSIS-NN's int8 softmax.
SOFTMAX_INPUT_INTEGER_BITS = 5


def quantize_multiplier(real: float) -> tuple[int, int]:
    """``(multiplier, shift)`` of ``real`` (0 -> (0, 0))."""
    if real == 0.0:
        return 0, 0
    mantissa, shift = math.frexp(real)
    multiplier = int(round(mantissa * (1 << 31)))
    if multiplier == 1 << 31:  # the mantissa rounded up to 1.0
        multiplier //= 2
        shift += 1
    return max(-(1 << 31), min((1 << 31) - 1, multiplier)), shift


def per_channel_multipliers(reals: list[float]) -> tuple[torch.Tensor, torch.Tensor]:
    """int32 multiplier and shift tensors, one entry per output channel."""
    pairs = [quantize_multiplier(r) for r in reals]
    return (torch.tensor([m for m, _ in pairs], dtype=torch.int32),
            torch.tensor([s for _, s in pairs], dtype=torch.int32))


def add_parameters(scale1: float, scale2: float, output_scale: float) -> tuple[tuple[int, int], tuple[int, int],
                                                                                 tuple[int, int]]:
    """Multiplier/shift pairs of an int8 add's two inputs and its output: both inputs are
    brought to the scale twice the larger of theirs, with ADD_LEFT_SHIFT bits of headroom."""
    twice_max = 2.0 * max(scale1, scale2)
    return (quantize_multiplier(scale1 / twice_max), quantize_multiplier(scale2 / twice_max),
            quantize_multiplier(twice_max / (output_scale * (1 << ADD_LEFT_SHIFT))))


def softmax_parameters(input_scale: float) -> tuple[int, int, int]:
    """``(input_multiplier, input_shift, diff_min)`` of CMSIS-NN's int8 softmax: the input
    differences in a fixed-point format with SOFTMAX_INPUT_INTEGER_BITS integer bits, and
    the most negative difference that still contributes."""
    bits = SOFTMAX_INPUT_INTEGER_BITS
    real = min(input_scale * (1 << (31 - bits)), float((1 << 31) - 1))
    multiplier, shift = quantize_multiplier(real)
    limit = ((1 << bits) - 1) * math.ldexp(1.0, 31 - bits) / math.ldexp(1.0, shift)
    return multiplier, shift, -int(math.floor(limit))
