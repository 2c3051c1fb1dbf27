"""RESCALE: integer scaling by a 32-bit multiplier and a right shift (TOSA 1.0).

TOSA applies ``apply_scale_32(value, multiplier, shift)`` =
``(value * multiplier + (1 << (shift - 1))) >> shift`` (SINGLE_ROUND: round half up,
the mode ExecuTorch uses and Vela implements bit-exactly). A real scale ``s`` becomes
``multiplier * 2**-shift`` with the multiplier normalised to [2**30, 2**31) so that
it keeps 31 significant bits; shift must stay in [2, 62].
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import tosa_serializer as ts

from kiln.backends.arm.tosa.builder import TosaBuilder, attribute, clamp_bytes
from kiln.backends.arm.tosa.values import QTensor

_MIN_SHIFT = 2
_MAX_SHIFT = 62


class ScaleOutOfRange(ValueError):
    """A real scale cannot be expressed as a TOSA multiplier/shift pair."""


def quantize_scale(scale: float, scale32: bool = True) -> tuple[int, int]:
    """(multiplier, shift) with ``multiplier * 2**-shift ~= scale``.

    ``scale = m * 2**e`` with m in [0.5, 1) (frexp); the multiplier is m scaled to
    31 bits (15 with ``scale32=False``) rounded to nearest, and shift = bits - e.
    Scales below 2**-31 lose low multiplier bits instead of exceeding shift 62.
    """
    if not math.isfinite(scale) or scale <= 0.0:
        raise ScaleOutOfRange(f"scale must be finite and positive, got {scale!r}")
    bits = 31 if scale32 else 15
    mantissa, exponent = math.frexp(scale)
    multiplier = math.floor(mantissa * (1 << bits) + 0.5)
    if multiplier == 1 << bits:  # mantissa rounded up to 1.0
        multiplier //= 2
        exponent += 1
    shift = bits - exponent
    if shift > _MAX_SHIFT:
        multiplier >>= min(bits, shift - _MAX_SHIFT)
        shift = _MAX_SHIFT
    if shift < _MIN_SHIFT:
        raise ScaleOutOfRange(f"scale {scale!r} is too large for RESCALE (needs shift {shift} < 2)")
    return multiplier, shift


def apply_scale_32(values: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """The TOSA SINGLE_ROUND scaling on int64 numpy data (for tests and constant folding)."""
    wide = values.astype(np.int64) * np.int64(multiplier) + (np.int64(1) << np.int64(shift - 1))
    return (wide >> np.int64(shift)).astype(np.int64)


def emit_rescale(
    builder: TosaBuilder,
    source: str,
    tosa_shape: Sequence[int],
    in_dtype: ts.DType,
    out_dtype: ts.DType,
    scales: Sequence[float] | float,
    in_zp: int,
    out_zp: int,
    stem: str,
) -> str:
    """RESCALE ``source`` by ``scales`` (one per last-dim channel, or one for all).

    int32 inputs and outputs must have zero point 0 (TOSA rule); the result is
    saturated to ``out_dtype``.
    """
    per_channel_scales = [float(s) for s in np.atleast_1d(np.asarray(scales, dtype=np.float64))]
    per_channel = len(per_channel_scales) > 1
    # An INT48 accumulator (int16 x int8 convolutions) takes 16-bit multipliers only (TOSA 1.0).
    scale32 = in_dtype != ts.DType.INT48
    pairs = [quantize_scale(s, scale32) for s in per_channel_scales]
    multipliers = builder.const(np.array([m for m, _ in pairs], np.int32 if scale32 else np.int16),
                                f"{stem}_multiplier")
    shifts = builder.const(np.array([s for _, s in pairs], np.int8), f"{stem}_shift")
    input_zp = builder.zero_point(in_zp, in_dtype, f"{stem}_in")
    output_zp = builder.zero_point(out_zp, out_dtype, f"{stem}_out")
    attr = attribute("Rescale", scale32, ts.RoundingMode.SINGLE_ROUND, per_channel, False, False)
    return builder.op(
        ts.Op.RESCALE, [source, multipliers, shifts, input_zp, output_zp],
        tosa_shape, out_dtype, attr, stem,
    )


def requantize(builder: TosaBuilder, value: QTensor, scale: float, zero_point: int,
               dtype: ts.DType, stem: str) -> QTensor:
    """``value`` with new quantization parameters (no operator if they already match)."""
    if value.same_quantization(scale, zero_point, dtype):
        return value
    name = emit_rescale(
        builder, value.name, value.tosa_shape, value.dtype, dtype,
        value.scale / scale, value.zero_point, zero_point, stem,
    )
    return QTensor(name, value.shape, dtype, float(scale), int(zero_point))


def to_int32(builder: TosaBuilder, value: QTensor, scale: float, stem: str) -> str:
    """``value`` as an int32 tensor with zero point 0 and real scale ``scale``."""
    return emit_rescale(
        builder, value.name, value.tosa_shape, value.dtype, ts.DType.INT32,
        value.scale / scale, value.zero_point, 0, stem,
    )


def to_int16(builder: TosaBuilder, value: QTensor, scale: float, stem: str) -> str:
    """``value`` as an int16 tensor with zero point 0 and real scale ``scale``."""
    return emit_rescale(
        builder, value.name, value.tosa_shape, value.dtype, ts.DType.INT16,
        value.scale / scale, value.zero_point, 0, stem,
    )


def emit_clamp(builder: TosaBuilder, source: str, tosa_shape: Sequence[int], dtype: ts.DType,
               low: int, high: int, stem: str) -> str:
    """CLAMP to [low, high] in the integer domain (Vela fuses it into the producer)."""
    attr = attribute("Clamp", clamp_bytes(low, dtype), clamp_bytes(high, dtype),
                     ts.NanPropagationMode.PROPAGATE)
    return builder.op(ts.Op.CLAMP, [source], tosa_shape, dtype, attr, stem)
