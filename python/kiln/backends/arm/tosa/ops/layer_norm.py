"""layer_norm of an int8 tensor over its last dim -> an integer TOSA decomposition (every Ethos-U).

For one row ``v = x - zero point`` of length N (int32, exact):

1. ``D = N v - sum(v)`` is N times the deviation from the mean, exactly; shifted right by
   ``h`` bits (chosen from N) so that ``V = sum(D'^2)`` fits int32. ``V`` plus eps (in the
   same units) is N^3 / 4^h times the variance.
2. ``1/sqrt(V)``: V is normalised by an even left shift ``2j`` into [2**29, 2**31), four
   Newton-Raphson steps give ``r = 1/sqrt(V << 2j / 2**31)`` in Q29, and ``D * r << j`` is
   the normalised row ``y`` times a known constant.
3. The affine part and the output quantization in one step: a per-channel int32 MUL by
   ``gamma / out_scale`` (constant), an ADD of ``beta / out_scale``, and a RESCALE to int8.

Precision: the variance is exact but for the ``h``-bit truncation of D (bits below
sqrt(N) / 2**h of a step), the reciprocal square root is exact to 2**-26: the result is
within one output step of PyTorch's float layer norm on the same int8 input.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Collection
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.builder import TosaBuilder
from kiln.backends.arm.tosa.context import LoweringContext, OutputQuant, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.fixed_point import NORMALISED_BITS, RECIPROCAL_BITS, FixedPoint, Int32
from kiln.backends.arm.tosa.ops.rescale import emit_rescale
from kiln.backends.arm.tosa.ops.reshape import transpose
from kiln.backends.arm.tosa.values import ConstTensor, canonical_perm, inverse, permute_shape

aten = torch.ops.aten

MAX_ROW = 4096
_RSQRT_STEPS = 4  # from 2.5 - 1.6 x (within 0.12 on [0.25, 1)): 0.12 -> 0.02 -> 6e-4 -> 5e-7 -> 4e-13
_PRODUCT_BITS = 30  # |W| and the per-channel multipliers stay below 2**30


def _normalized_shape(node: torch.fx.Node) -> list[int]:
    return [int(d) for d in node.args[1]]


def check_layer_norm(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    shape = tuple(node.args[0].meta["val"].shape)
    normalized = _normalized_shape(node)
    if len(normalized) != 1:
        return f"layer norm over {len(normalized)} dims is not lowered (only the last dim)"
    if len(shape) > 4:
        return f"layer norm of a rank-{len(shape)} tensor is not lowered (rank <= 4)"
    if normalized[0] > MAX_ROW:
        return f"layer norm over {normalized[0]} elements is not lowered (at most {MAX_ROW})"
    return None


def _row_item(ctx: LoweringContext, node: torch.fx.Node) -> torch.fx.Node:
    """The getitem 0 (the normalised tensor) of native_layer_norm's (out, mean, rstd)."""
    items = [u for u in node.users if u.target is operator.getitem and u.args[1] == 0]
    others = [u for u in node.users if u not in items and u.users]
    if len(items) != 1 or others:
        raise ctx.fail(node, "only the normalised output of layer norm is lowered (not its mean or rstd)")
    return items[0]


def _affine(ctx: LoweringContext, node: torch.fx.Node, index: int, name: str, n: int, default: float) -> np.ndarray:
    arg = scalar_arg(node, index, name, None)
    if arg is None:
        return np.full(n, default, np.float64)
    value = ctx.value(arg, node)
    if not isinstance(value, ConstTensor):
        raise ctx.fail(node, f"layer norm {name} must be a constant")
    return value.dequantized().astype(np.float64).reshape(-1)


@register(aten.native_layer_norm.default, check=check_layer_norm)
def lower_layer_norm(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_layer_norm(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    x = ctx.qtensor(node.args[0], node)
    if x.dtype != ts.DType.INT8:
        raise ctx.fail(node, "layer norm is lowered for int8 inputs only")
    item = _row_item(ctx, node)
    out = ctx.output_quant(item)
    n = x.shape[-1]
    gamma = _affine(ctx, node, 2, "weight", n, 1.0)
    beta = _affine(ctx, node, 3, "bias", n, 0.0)
    eps = float(scalar_arg(node, 4, "eps", 1e-5))
    stem = ctx.stem(node)
    # Rows along the TOSA tensor's last axis (where REDUCE_SUM of int32 is native).
    axis = canonical_perm(x.rank).index(x.rank - 1)
    to_last = tuple(d for d in range(x.rank) if d != axis) + (axis,)
    rows = transpose(ctx, x.name, x.tosa_shape, to_last, x.dtype, f"{stem}_rows")
    rows_shape = permute_shape(x.tosa_shape, to_last)
    result = emit_layer_norm_rows(ctx.builder, rows, rows_shape, x.scale, x.zero_point, gamma, beta, eps, out,
                                  stem)
    if result is None:
        raise ctx.fail(node, "the output scale is too small for gamma and beta in 32-bit fixed point")
    result = transpose(ctx, result, rows_shape, inverse(to_last), out.dtype, f"{stem}_back")
    ctx.finish(item, out, result, x.tosa_shape, out.dtype, out.scale, out.zero_point)
    ctx.consumed.add(item)


def _deviation_shift(n: int) -> int:
    """Right shift h of D = N v - sum(v) (|D| <= 255 N) so that N (255 N / 2**h)**2 < 2**31."""
    h = 0
    while n * (255 * n / 2**h + 1) ** 2 >= 2**31:
        h += 1
    return h


def emit_layer_norm_rows(builder: TosaBuilder, x: str, shape: tuple[int, ...], scale: float, zero_point: int,
                         gamma: np.ndarray, beta: np.ndarray, eps: float, out: OutputQuant,
                         stem: str) -> str | None:
    """Layer norm along the last axis of int8 tensor ``x``, quantized as ``out`` says (None
    if ``gamma``/``beta`` over the output scale do not fit 32-bit fixed point)."""
    n = shape[-1]
    rank = len(shape)
    fp = FixedPoint(builder, stem)
    h = _deviation_shift(n)

    # 1. D = N v - sum(v), D' = D >> h, V = sum(D'^2) + eps in the same units.
    v = Int32(emit_rescale(builder, x, shape, ts.DType.INT8, ts.DType.INT32, 1.0, zero_point, 0, f"{stem}_v"),
              shape)
    total = fp.reduce_sum(v, rank - 1, "sum")
    deviation = fp.sub(fp.mul(v, fp.constant(n, rank, "n"), 0, "nv"), total, "dev")
    reduced = fp.shift_right(deviation, fp.constant(h, rank, "h"), "dev_h") if h else deviation
    variance = fp.reduce_sum(fp.mul(reduced, reduced, 0, "sq"), rank - 1, "var")
    eps_units = min(round(eps / scale**2 * n**3 / 4**h), 2**30)
    variance = fp.add(variance, fp.constant(eps_units, rank, "eps"), "var_eps")
    variance = fp.maximum(variance, fp.constant(1, rank, "one"), "var_pos")  # all-equal rows: V = 0

    # 2. r = 1/sqrt(V << 2j / 2**31) in Q29 with V << 2j in [2**29, 2**31).
    leading = fp.count_leading_zeros(variance, "clz")
    j = fp.shift_right(fp.sub(leading, fp.constant(1, rank, "c1"), "clz1"), fp.constant(1, rank, "c2"), "j")
    normalised = fp.shift_left(variance, fp.add(j, j, "2j"), "norm")
    r = rsqrt(fp, normalised, "rsqrt")
    # y = D / (2**h sqrt(V / N)) and 1/sqrt(V) = 2**j r / 2**(29 + 15.5): Y = (D << j) r >> 29
    # is y * K with K = 2**(15.5 + h) / sqrt(N) (|Y| <= sqrt(N) K < 2**27; shifting before the
    # multiply keeps Y's rounding at one unit of Y).
    normalised_row = fp.mul(fp.shift_left(deviation, j, "dj"), r, RECIPROCAL_BITS, "y")
    k = 2.0 ** (NORMALISED_BITS / 2 + h) / math.sqrt(n)

    # 3. W = (y gamma + beta) / out_scale * 2**F, then RESCALE by 2**-F.
    span = math.sqrt(n) * float(np.max(np.abs(gamma))) / out.scale + float(np.max(np.abs(beta))) / out.scale + 1.0
    fraction = min(24, math.floor(_PRODUCT_BITS - math.log2(span)))
    gains = gamma / out.scale * 2.0**fraction / k
    largest = float(np.max(np.abs(gains))) or 1.0
    gain_shift = math.floor(_PRODUCT_BITS - math.log2(largest))
    if fraction < 0 or not 0 <= gain_shift <= 62:
        return None
    channel = (1,) * (rank - 1) + (n,)
    gain = Int32(builder.const(np.round(gains * 2.0**gain_shift).astype(np.int32).reshape(channel),
                               f"{stem}_gamma"), channel)
    offset = Int32(builder.const(np.round(beta / out.scale * 2.0**fraction).astype(np.int32).reshape(channel),
                                 f"{stem}_beta"), channel)
    scaled = fp.add(fp.mul(normalised_row, gain, gain_shift, "gain"), offset, "affine")
    return emit_rescale(builder, scaled.name, shape, ts.DType.INT32, out.dtype, 2.0**-fraction, 0,
                        out.zero_point, f"{stem}_out")


def rsqrt(fp: FixedPoint, normalised: Int32, name: str) -> Int32:
    """``1/sqrt(x)`` in Q29 for ``x = normalised / 2**31`` in [0.25, 1), by Newton-Raphson
    ``r <- r (3 - x r^2) / 2`` from the line 2.5 - 1.6 x."""
    rank = normalised.rank
    one = 1 << RECIPROCAL_BITS
    estimate = fp.sub(fp.constant(round(2.5 * one), rank, f"{name}_a"),
                      fp.mul(normalised, fp.constant(round(1.6 * one), rank, f"{name}_b"), NORMALISED_BITS,
                             f"{name}_bx"), f"{name}_r0")
    three = fp.constant(3 << (RECIPROCAL_BITS - 1), rank, f"{name}_three")  # 3 in Q28
    for step in range(1, _RSQRT_STEPS + 1):
        square = fp.mul(estimate, estimate, RECIPROCAL_BITS + 1, f"{name}_sq{step}")  # r^2 in Q28
        product = fp.mul(normalised, square, NORMALISED_BITS, f"{name}_xr{step}")  # x r^2 in Q28
        factor = fp.sub(three, product, f"{name}_t{step}")  # 3 - x r^2 in Q28
        estimate = fp.mul(estimate, factor, RECIPROCAL_BITS, f"{name}_r{step}")  # r (3 - x r^2) / 2 in Q29
    return estimate
