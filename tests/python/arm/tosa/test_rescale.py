"""RESCALE multiplier/shift: the TOSA scaling Kiln computes itself."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kiln.backends.arm.tosa.ops.rescale import ScaleOutOfRange, apply_scale_32, quantize_scale


@pytest.mark.parametrize("scale", [1e-9, 2.0**-31, 3.1e-5, 0.0123, 0.5, 0.99999999, 1.0, 7.5, 1234.5])
def test_multiplier_and_shift_represent_the_scale(scale: float) -> None:
    multiplier, shift = quantize_scale(scale)
    assert 2 <= shift <= 62
    assert 0 <= multiplier < 2**31
    if shift < 62:  # normalised: 31 significant bits
        assert multiplier >= 2**30
        assert abs(multiplier * 2.0**-shift - scale) <= scale * 2.0**-30
    else:  # tiny scales lose low bits but stay within half a unit of 2**-62
        assert abs(multiplier * 2.0**-shift - scale) <= 2.0**-62


def test_mantissa_rounding_up_to_one_renormalises() -> None:
    multiplier, shift = quantize_scale(1.0 - 2.0**-40)
    assert (multiplier, shift) == (2**30, 30)


@pytest.mark.parametrize("scale", [0.0, -1.0, math.inf, math.nan, 2.0**31])
def test_unrepresentable_scales_are_rejected(scale: float) -> None:
    with pytest.raises(ScaleOutOfRange):
        quantize_scale(scale)


def test_apply_scale_matches_exact_rounding() -> None:
    """SINGLE_ROUND == round half up of value * scale, computed exactly with integers."""
    rng = np.random.default_rng(0)
    values = rng.integers(-(2**24), 2**24, 4000)
    for scale in (0.37, 0.0021, 1.9):
        multiplier, shift = quantize_scale(scale)
        got = apply_scale_32(values, multiplier, shift)
        exact = [(int(v) * multiplier + (1 << (shift - 1))) >> shift for v in values]  # Python ints
        assert np.array_equal(got, np.array(exact, dtype=np.int64))
        real = values * scale
        assert np.max(np.abs(got - real)) <= 0.5 + np.max(np.abs(real)) * 2.0**-30 + 1e-9
