"""int32 fixed-point arithmetic in TOSA, for the integer softmax and layer norm.

Both need a per-row reciprocal (softmax: of the sum of exponentials; layer norm: of the
standard deviation), which TOSA's integer profile does not have. It is built the way
integer kernels build it: count leading zeros to normalise the value into [0.5, 1), a few
Newton-Raphson steps with rounding 32 x 32 -> 64-bit multiplies (MUL with a shift), and a
per-row shift back. Every operator here is one Vela compiles for Ethos-U55, U65 and U85
(CLZ, LOGICAL_LEFT_SHIFT, ARITHMETIC_RIGHT_SHIFT, MUL/ADD/SUB on int32, REDUCE_SUM).

Values are :class:`Int32` (a TOSA tensor name and its shape); binary operators broadcast
like TOSA (equal ranks, size-1 dims stretch), constants are made at the operand's rank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tosa_serializer as ts

from kiln.backends.arm.tosa.builder import TosaBuilder, attribute

# A number in [0.5, 1) scaled by 2**31 (CLZ-normalised int32), and reciprocals in (1, 2]
# scaled by 2**29: both keep 30+ significant bits inside int32.
NORMALISED_BITS = 31
RECIPROCAL_BITS = 29
_NEWTON_STEPS = 3  # the 48/17 - 32/17 x start is within 1/17: 3 steps reach 2**-29


@dataclass(frozen=True)
class Int32:
    """An int32 TOSA tensor: its name and shape."""

    name: str
    shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)


class FixedPoint:
    """Emits int32 arithmetic into ``builder``; tensor names start with ``stem``."""

    def __init__(self, builder: TosaBuilder, stem: str) -> None:
        self.builder = builder
        self.stem = stem

    # ------------------------------------------------------------------ helpers
    def constant(self, value: int, rank: int, name: str = "c") -> Int32:
        shape = (1,) * rank
        array = np.full(shape, int(value), np.int32)
        return Int32(self.builder.const(array, f"{self.stem}_{name}"), shape)

    def _emit(self, op: ts.Op, operands: list[str], shape: tuple[int, ...], name: str,
              attr: ts.TosaSerializerAttribute | None = None) -> Int32:
        return Int32(self.builder.op(op, operands, shape, ts.DType.INT32, attr, f"{self.stem}_{name}"), shape)

    @staticmethod
    def _broadcast(a: Int32, b: Int32) -> tuple[int, ...]:
        if a.rank != b.rank:
            raise ValueError(f"operands of rank {a.rank} and {b.rank}")
        return tuple(max(x, y) for x, y in zip(a.shape, b.shape))

    # ------------------------------------------------------------------ operators
    def add(self, a: Int32, b: Int32, name: str = "add") -> Int32:
        return self._emit(ts.Op.ADD, [a.name, b.name], self._broadcast(a, b), name)

    def sub(self, a: Int32, b: Int32, name: str = "sub") -> Int32:
        return self._emit(ts.Op.SUB, [a.name, b.name], self._broadcast(a, b), name)

    def maximum(self, a: Int32, b: Int32, name: str = "max") -> Int32:
        attr = attribute("Maximum", ts.NanPropagationMode.PROPAGATE)
        return self._emit(ts.Op.MAXIMUM, [a.name, b.name], self._broadcast(a, b), name, attr)

    def mul(self, a: Int32, b: Int32, shift: int, name: str = "mul") -> Int32:
        """``(a * b + 2**(shift - 1)) >> shift`` computed in 64 bits (TOSA MUL's rounding)."""
        shift_name = self.builder.const(np.array([shift], np.int8), f"{self.stem}_{name}_shift")
        return self._emit(ts.Op.MUL, [a.name, b.name, shift_name], self._broadcast(a, b), name)

    def count_leading_zeros(self, a: Int32, name: str = "clz") -> Int32:
        return self._emit(ts.Op.CLZ, [a.name], a.shape, name)

    def shift_left(self, a: Int32, amount: Int32, name: str = "shl") -> Int32:
        return self._emit(ts.Op.LOGICAL_LEFT_SHIFT, [a.name, amount.name], self._broadcast(a, amount), name)

    def shift_right(self, a: Int32, amount: Int32, name: str = "asr") -> Int32:
        """Arithmetic shift right, rounding down (``round=False``: Vela's SHR truncates)."""
        attr = attribute("ArithmeticRightShift", False)
        return self._emit(ts.Op.ARITHMETIC_RIGHT_SHIFT, [a.name, amount.name], self._broadcast(a, amount), name,
                          attr)

    def reduce_sum(self, a: Int32, axis: int, name: str = "sum") -> Int32:
        shape = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
        return self._emit(ts.Op.REDUCE_SUM, [a.name], shape, name, attribute("ReduceSum", axis))

    # ------------------------------------------------------------------ reciprocal
    def normalise(self, value: Int32, name: str) -> tuple[Int32, Int32]:
        """(``value << k``, k) with k chosen per element so the result lies in [2**30, 2**31).
        ``value`` must be positive."""
        leading = self.count_leading_zeros(value, f"{name}_clz")
        k = self.sub(leading, self.constant(1, value.rank, f"{name}_one"), f"{name}_k")
        return self.shift_left(value, k, f"{name}_norm"), k

    def reciprocal(self, normalised: Int32, name: str) -> Int32:
        """``2**60 / normalised`` (= 1/x in Q29 for x = normalised / 2**31 in [0.5, 1)),
        by Newton-Raphson from 48/17 - 32/17 x."""
        rank = normalised.rank
        one = 1 << RECIPROCAL_BITS
        start_offset = self.constant(round(48 / 17 * one), rank, f"{name}_c48")
        start_slope = self.constant(round(32 / 17 * one), rank, f"{name}_c32")
        estimate = self.sub(start_offset, self.mul(normalised, start_slope, NORMALISED_BITS, f"{name}_x0"),
                            f"{name}_r0")
        unit = self.constant(one, rank, f"{name}_unit")
        for step in range(1, _NEWTON_STEPS + 1):
            product = self.mul(normalised, estimate, NORMALISED_BITS, f"{name}_xr{step}")
            error = self.sub(unit, product, f"{name}_e{step}")
            correction = self.mul(estimate, error, RECIPROCAL_BITS, f"{name}_d{step}")
            estimate = self.add(estimate, correction, f"{name}_r{step}")
        return estimate

