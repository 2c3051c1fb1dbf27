"""What an FX node of a quantized graph stands for once it is lowered to TOSA.

PT2E reference graphs compute in float between ``dequantize`` and ``quantize``
nodes. Lowering replaces that float arithmetic by integer TOSA operators, so each
FX node maps to one of:

* :class:`QTensor` - a TOSA integer tensor plus the affine parameters that give its
  real value (``real = scale * (q - zero_point)``). Placeholders, ``dequantize`` nodes,
  ``quantize`` nodes and layout-only operators (view, permute, max pool ...) are
  QTensors: their float value is *exactly* representable.
* :class:`ConstTensor` - a constant (weights, bias) kept in numpy with its
  quantization (per-tensor or per-channel), folded into the operator that uses it.

Layout: a QTensor's TOSA tensor is its logical (PyTorch) tensor permuted by
:func:`canonical_perm` - NHWC for rank 4 (TOSA convolutions and pools want
channels last), unchanged for other ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import tosa_serializer as ts

# NCHW -> NHWC: TOSA tensor dim i is logical dim NHWC[i].
NHWC: tuple[int, ...] = (0, 2, 3, 1)


def canonical_perm(rank: int) -> tuple[int, ...]:
    """How a logical tensor of ``rank`` dims is laid out in TOSA (NHWC for rank 4)."""
    return NHWC if rank == 4 else tuple(range(rank))


def permute_shape(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(shape[p]) for p in perm)


def compose(first: Sequence[int], then: Sequence[int]) -> tuple[int, ...]:
    """The single permutation equal to ``x.permute(first).permute(then)``."""
    return tuple(first[t] for t in then)


def inverse(perm: Sequence[int]) -> tuple[int, ...]:
    result = [0] * len(perm)
    for index, axis in enumerate(perm):
        result[axis] = index
    return tuple(result)


def moves_data(shape: Sequence[int], perm: Sequence[int]) -> bool:
    """False when permuting ``shape`` by ``perm`` leaves the bytes in the same order
    (only size-1 dims move), so a RESHAPE can stand in for the TRANSPOSE."""
    kept = [axis for axis in perm if shape[axis] != 1]
    return kept != sorted(kept)


@dataclass(frozen=True)
class QTensor:
    """A quantized TOSA tensor (see module docstring)."""

    name: str
    shape: tuple[int, ...]  # logical (PyTorch) shape
    dtype: ts.DType
    scale: float
    zero_point: int

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def tosa_shape(self) -> tuple[int, ...]:
        return permute_shape(self.shape, canonical_perm(self.rank))

    def same_quantization(self, scale: float, zero_point: int, dtype: ts.DType) -> bool:
        return (
            self.dtype == dtype
            and self.zero_point == zero_point
            and np.float32(self.scale) == np.float32(scale)
        )

    def renamed(self, name: str, shape: Sequence[int] | None = None) -> "QTensor":
        return replace(self, name=name, shape=tuple(shape) if shape is not None else self.shape)


@dataclass(frozen=True)
class ConstTensor:
    """A constant with its quantization (``scales is None`` means a float constant)."""

    data: np.ndarray  # stored values: int8/int32 if quantized, float otherwise
    scales: np.ndarray | None = None  # one per channel along ``axis`` (or one in all)
    zero_points: np.ndarray | None = None
    axis: int | None = None  # None: per-tensor

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape)

    @property
    def is_quantized(self) -> bool:
        return self.scales is not None

    def channel_scales(self, channels: int) -> np.ndarray:
        """Scales as one float64 per channel (per-tensor scales are broadcast)."""
        assert self.scales is not None
        scales = np.asarray(self.scales, dtype=np.float64).reshape(-1)
        return np.full(channels, scales[0]) if scales.size == 1 else scales

    def channel_zero_points(self, channels: int) -> np.ndarray:
        zps = np.zeros(1, np.int64) if self.zero_points is None else np.asarray(self.zero_points).reshape(-1)
        return np.full(channels, zps[0]) if zps.size == 1 else zps.astype(np.int64)

    def dequantized(self) -> np.ndarray:
        """The float32 value the PT2E graph computes with."""
        if self.scales is None:
            return self.data.astype(np.float32)
        shape = [1] * self.data.ndim
        if self.axis is not None and np.asarray(self.scales).size > 1:
            shape[self.axis] = -1
        scales = np.asarray(self.scales, dtype=np.float32).reshape(shape)
        zps = np.asarray(
            0 if self.zero_points is None else self.zero_points, dtype=np.float32
        ).reshape(shape if np.asarray(self.zero_points).size > 1 else [1] * self.data.ndim)
        return ((self.data.astype(np.float32) - zps) * scales).astype(np.float32)

    def permuted(self, perm: Sequence[int]) -> "ConstTensor":
        axis = None if self.axis is None else list(perm).index(self.axis)
        return replace(self, data=np.ascontiguousarray(self.data.transpose(perm)), axis=axis)
