"""softmax of an int8 tensor -> an integer TOSA decomposition (every Ethos-U).

For one row ``x`` (int8, scale ``s``) the result is ``exp(s(x_i - m)) / sum_j exp(s(x_j - m))``
with ``m = max(x)``:

1. ``m`` = REDUCE_MAX; ``x - m`` lies in [-255, 0] (int32 SUB), so ``x - m + 127`` is an
   exact int8 code: every difference the row can hold has its own table entry.
2. ``E = round(32767 exp(s (x - m)))`` in 15 bits, from two int8 TABLEs (its high byte
   and its low byte, rejoined by RESCALE x256 + ADD); ``S`` = REDUCE_SUM of ``E`` (< 2**31
   for rows shorter than 65536).
3. ``E / S``: ``S`` normalised by CLZ, its reciprocal by Newton-Raphson
   (:mod:`fixed_point`), one rounding multiply and a per-row shift give ``E / S`` in Q23;
   a RESCALE quantizes it to the output.

The result is within one output step of PyTorch's float softmax on the same int8 input
(the 15-bit exponentials and the 29-bit reciprocal are exact to far below 1/256).
log_softmax is not lowered.

A mask that hides scores (``softmax(scores + mask)`` with a constant mask of 0 and -inf:
causal attention, a padding pattern) is applied inside: hidden scores are lowered to the
smallest code before the row maximum, and their exponentials are multiplied by 0 before
the sum, so that each row is the softmax of its kept scores exactly as PyTorch computes it
(the -inf itself has no integer code and never exists on the NPU).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.builder import TosaBuilder, attribute
from kiln.backends.arm.tosa.context import LoweringContext, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.fixed_point import NORMALISED_BITS, RECIPROCAL_BITS, FixedPoint, Int32
from kiln.backends.arm.tosa.ops.rescale import emit_rescale
from kiln.backends.arm.tosa.ops.reshape import transpose
from kiln.backends.arm.tosa.values import canonical_perm, inverse, permute_shape
from kiln.passes.safe_softmax import SoftmaxMask, applies_a_mask, softmax_mask

aten = torch.ops.aten

EXP_BITS = 15  # E = round((2**15 - 1) exp(.)) in [0, 32767]
RESULT_BITS = 23  # E / S in Q23 before the output RESCALE
MAX_ROW = 65535  # S = sum of E must stay below 2**31
_INT8_OFFSET = 127  # x - m in [-255, 0] plus 127 is an int8 code


def _softmax_dim(node: torch.fx.Node) -> int:
    rank = len(node.args[0].meta["val"].shape)
    return int(scalar_arg(node, 1, "dim", -1)) % max(rank, 1)


def check_softmax(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if node.target == aten._log_softmax.default:
        return "log_softmax is not lowered (only softmax)"
    if node.target == aten._softmax.default and scalar_arg(node, 2, "half_to_float", False):
        return "softmax with half_to_float is not lowered"
    shape = tuple(node.args[0].meta["val"].shape)
    if len(shape) > 4:
        return f"softmax of a rank-{len(shape)} tensor is not lowered (rank <= 4)"
    if shape and shape[_softmax_dim(node)] > MAX_ROW:
        return f"softmax over {shape[_softmax_dim(node)]} elements is not lowered (at most {MAX_ROW})"
    return None


def softmax_scores(node: torch.fx.Node, value: Any) -> tuple[Any, SoftmaxMask | None]:
    """(the scores softmax ``node`` normalises, the constant mask it applies to them or None)."""
    source = node.args[0]
    mask = softmax_mask(source, value) if applies_a_mask(source) else None
    return (source, None) if mask is None else (mask.scores, mask)


def exp_tables(scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(high byte, low byte - 128) of ``E(c) = round(32767 exp(scale (c - 127)))`` for every
    int8 code ``c``."""
    codes = np.arange(-128, 128, dtype=np.float64)
    e = np.round(((1 << EXP_BITS) - 1) * np.exp(scale * (codes - _INT8_OFFSET))).astype(np.int64)
    return (e >> 8).astype(np.int8), ((e & 0xFF) - 128).astype(np.int8)


@register(aten._softmax.default, aten.softmax.int, aten._log_softmax.default, check=check_softmax)
def lower_softmax(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_softmax(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    scores, mask = softmax_scores(node, ctx.constants.value)
    if mask is not None and not mask.only_hides:
        raise ctx.fail(node, "the mask added to its input holds values other than 0 and -inf")
    x = ctx.qtensor(scores, node)
    if x.dtype != ts.DType.INT8:
        raise ctx.fail(node, "softmax is lowered for int8 inputs only")
    out = ctx.output_quant(node)
    stem = ctx.stem(node)
    # The rows run along the TOSA tensor's last axis: that is where REDUCE_SUM of int32 is
    # native on every Ethos-U (Vela moves other axes with 32-bit transposes).
    axis = canonical_perm(x.rank).index(_softmax_dim(node))
    to_last = tuple(d for d in range(x.rank) if d != axis) + (axis,)
    rows = transpose(ctx, x.name, x.tosa_shape, to_last, x.dtype, f"{stem}_rows")
    rows_shape = permute_shape(x.tosa_shape, to_last)
    keep = None
    if mask is not None:  # the same axis order as the rows (size-1 axes broadcast)
        keep = mask.keep.numpy().transpose(canonical_perm(x.rank)).transpose(to_last)
    result = emit_softmax_rows(ctx.builder, rows, rows_shape, x.scale, x.zero_point, out.scale, out.zero_point,
                               out.dtype, stem, keep)
    result = transpose(ctx, result, rows_shape, inverse(to_last), out.dtype, f"{stem}_back")
    ctx.finish(node, out, result, x.tosa_shape, out.dtype, out.scale, out.zero_point)


def emit_softmax_rows(builder: TosaBuilder, x: str, shape: tuple[int, ...], scale: float, zero_point: int,
                      out_scale: float, out_zero_point: int, out_dtype: ts.DType, stem: str,
                      keep: np.ndarray | None = None) -> str:
    """Softmax along the last axis of int8 tensor ``x``, quantized to the output's parameters;
    only over the elements where ``keep`` (bool, broadcastable to ``shape``) is True if given."""
    axis = len(shape) - 1
    row_shape = (*shape[:-1], 1)
    fp = FixedPoint(builder, stem)
    if keep is not None:
        x = _lowest_where_hidden(builder, fp, x, shape, keep, stem)

    # 1. x - max + 127 as an int8 code.
    row_max = builder.op(ts.Op.REDUCE_MAX, [x], row_shape, ts.DType.INT8,
                         attribute("ReduceMax", axis, ts.NanPropagationMode.PROPAGATE), f"{stem}_max")
    wide = Int32(emit_rescale(builder, x, shape, ts.DType.INT8, ts.DType.INT32, 1.0, zero_point, 0,
                              f"{stem}_x32"), shape)
    wide_max = Int32(emit_rescale(builder, row_max, row_shape, ts.DType.INT8, ts.DType.INT32, 1.0, zero_point, 0,
                                  f"{stem}_max32"), row_shape)
    difference = fp.sub(wide, wide_max, "diff")
    code = emit_rescale(builder, difference.name, shape, ts.DType.INT32, ts.DType.INT8, 1.0, 0, _INT8_OFFSET,
                        f"{stem}_code")

    # 2. E in 15 bits from two byte tables, and its row sum.
    high_table, low_table = exp_tables(scale)
    high = builder.op(ts.Op.TABLE, [code, builder.const(high_table, f"{stem}_exp_high")], shape,
                      ts.DType.INT8, None, f"{stem}_exp_hi")
    low = builder.op(ts.Op.TABLE, [code, builder.const(low_table, f"{stem}_exp_low")], shape,
                     ts.DType.INT8, None, f"{stem}_exp_lo")
    high32 = Int32(emit_rescale(builder, high, shape, ts.DType.INT8, ts.DType.INT32, 256.0, 0, 0,
                                f"{stem}_hi32"), shape)
    low32 = Int32(emit_rescale(builder, low, shape, ts.DType.INT8, ts.DType.INT32, 1.0, -128, 0,
                               f"{stem}_lo32"), shape)
    exponential = fp.add(high32, low32, "exp")
    if keep is not None:  # hidden scores weigh nothing
        kept = Int32(builder.const(keep.astype(np.int32), f"{stem}_keep"), keep.shape)
        exponential = fp.mul(exponential, kept, 0, "exp_kept")
    total = fp.reduce_sum(exponential, axis, "sum")

    # 3. E / S in Q23. With S << k normalised and R = 2**60 / (S << k), E * R >> 15 (E < 2**15,
    # R <= 2**30: it fits int32) is E / S * 2**(45 - k); shifting right by 22 - k leaves Q23.
    normalised, k = fp.normalise(total, "sum")
    reciprocal = fp.reciprocal(normalised, "recip")
    scaled = fp.mul(exponential, reciprocal, EXP_BITS, "scaled")
    base = NORMALISED_BITS + RECIPROCAL_BITS - EXP_BITS - RESULT_BITS  # 60 - 15 - 23 = 22
    shift = fp.sub(fp.constant(base, len(shape), "shift_base"), k, "shift")
    result = fp.shift_right(scaled, shift, "result")
    return emit_rescale(builder, result.name, shape, ts.DType.INT32, out_dtype, 2.0 ** -RESULT_BITS / out_scale,
                        0, out_zero_point, f"{stem}_out")


def _lowest_where_hidden(builder: TosaBuilder, fp: FixedPoint, x: str, shape: tuple[int, ...], keep: np.ndarray,
                         stem: str) -> str:
    """``x`` with the hidden elements at -128, so that a row's maximum is that of its kept
    scores (a hidden score above them would push their exponentials towards 0)."""
    codes = Int32(emit_rescale(builder, x, shape, ts.DType.INT8, ts.DType.INT32, 1.0, 0, 0, f"{stem}_codes"), shape)
    drop = Int32(builder.const((keep.astype(np.int32) - 1) * 256, f"{stem}_drop"), keep.shape)
    lowered = fp.add(codes, drop, "hidden_low")  # hidden codes end below -128: the RESCALE saturates them
    return emit_rescale(builder, lowered.name, shape, ts.DType.INT32, ts.DType.INT8, 1.0, 0, 0, f"{stem}_masked")
