"""softmax and log_softmax of an int8 tensor -> an integer TOSA decomposition (every Ethos-U).

For one row ``x`` (int8, scale ``s``) softmax is ``exp(s(x_i - m)) / sum_j exp(s(x_j - m))``
with ``m = max(x)``, and log_softmax is ``s(x_i - m) - ln sum_j exp(s(x_j - m))``. Both start
from the same row exponentials:

1. ``m`` = REDUCE_MAX; ``x - m`` lies in [-255, 0] (int32 SUB), so ``x - m + 127`` is an
   exact int8 code: every difference the row can hold has its own table entry.
2. ``E = round(32767 exp(s (x - m)))`` in 15 bits, from two int8 TABLEs (its high byte
   and its low byte, rejoined by RESCALE x256 + ADD); ``S`` = REDUCE_SUM of ``E`` (< 2**31
   for rows shorter than 65536).

softmax, 3. ``E / S``: ``S`` normalised by CLZ, its reciprocal by Newton-Raphson
(:mod:`fixed_point`), one rounding multiply and a per-row shift give ``E / S`` in Q23; a
RESCALE quantizes it to the output. The result is within one output step of PyTorch's
float softmax on the same int8 input (the 15-bit exponentials and the 29-bit reciprocal
are exact to far below 1/256).

log_softmax, 3. ``ln(S / 32767)``: ``S`` normalised by CLZ to ``f 2**30`` with ``f`` in
[1, 2) and shift ``k``, so ``ln S = ln f + (30 - k) ln 2``. The 8 bits of ``f`` after its
leading one pick the 1/256 step ``[f0, f0 + 1/256)`` it lies in: ``ln f0`` comes from two
int8 TABLEs (16 bits), ``1 / f0`` from a third, and ``ln f = ln f0 + (f - f0) / f0`` (a MUL
of the 22 bits below the index; what is left out is below ``(1/256)**2 / 2``). ``s (x - m)``
(a MUL) minus ``ln(S / 32767)``, in fixed point with :func:`log_fraction_bits` fraction
bits, is RESCALEd to the output. The exponentials' rounding dominates what remains: far
below an output step.

The rows are laid out as one ``(1, rows, length)`` matrix: every row is independent, so a
batch folds into the rows and the NPU never sees a batch above 1.

A mask that hides scores (``softmax(scores + mask)`` with a constant mask of 0 and -inf:
causal attention, a padding pattern) is applied inside: hidden scores are lowered to the
smallest code before the row maximum, and their exponentials are multiplied by 0 before
the sum, so that each row is the softmax of its kept scores exactly as PyTorch computes it
(the -inf itself has no integer code and never exists on the NPU). A masked softmax keeps
its rows' own shape (the mask broadcasts over size-1 axes there); log_softmax takes no mask.

A mask computed from the inputs (``where(hidden, -inf, 0)`` of a padding mask from a
``lengths`` input, Ethos-U85) arrives as the BOOL tensor ``hidden`` (logical.py): it is
broadcast to the scores (TILE) and applied the same way with SELECTs, and the rows fold
into one matrix as without a mask. A row it hides entirely has no kept score: its
exponentials are all 0 and so is its every probability, which is what the safe-softmax
guard reading such a softmax (``where(all hidden, 0, softmax)``) gives; the guard is
lowered with the softmax, its result the softmax's.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.constraints import softmax_objection
from kiln.backends.arm.tosa.builder import TosaBuilder, attribute
from kiln.backends.arm.tosa.context import LoweringContext, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.fixed_point import NORMALISED_BITS, RECIPROCAL_BITS, FixedPoint, Int32
from kiln.backends.arm.tosa.ops.rescale import emit_rescale, quantize_scale
from kiln.backends.arm.tosa.ops.reshape import relayout, transpose
from kiln.backends.arm.tosa.values import QTensor, canonical_perm, inverse, permute_shape
from kiln.passes.safe_softmax import SoftmaxMask, applies_a_mask, masked_scores, softmax_guard, softmax_mask

aten = torch.ops.aten

EXP_BITS = 15  # E = round((2**15 - 1) exp(.)) in [0, 32767]
RESULT_BITS = 23  # E / S in Q23 before the output RESCALE
MAX_ROW = 65535  # S = sum of E must stay below 2**31
_INT8_OFFSET = 127  # x - m in [-255, 0] plus 127 is an int8 code
_LOG_INDEX_SHIFT = NORMALISED_BITS - 1 - 8  # S << k in [2**30, 2**31): bits 29..22 index ln f
_LOG_INDEX_OFFSET = 3 << 7  # (S << k) >> 22 in [256, 512) minus 384 is an int8 code
_SLOPE_OFFSET = 192  # 256 / f0 in (128, 256] minus 192 is an int8 code
_MAX_LOG_FRACTION_BITS = 16


def _softmax_dim(node: torch.fx.Node) -> int:
    rank = len(node.args[0].meta["val"].shape)
    return int(scalar_arg(node, 1, "dim", -1)) % max(rank, 1)


def check_softmax(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if node.target in (aten._softmax.default, aten._log_softmax.default) \
            and scalar_arg(node, 2, "half_to_float", False):
        return "softmax with half_to_float is not lowered"
    shape = tuple(node.args[0].meta["val"].shape)
    if len(shape) > 4:
        return f"softmax of a rank-{len(shape)} tensor is not lowered (rank <= 4)"
    if not shape:
        return None
    dim = _softmax_dim(node)
    if shape[dim] > MAX_ROW:
        return f"softmax over {shape[dim]} elements is not lowered (at most {MAX_ROW})"
    return softmax_objection(compile_spec, math.prod(shape) // shape[dim])


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


def log_tables(fraction_bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each int8 code ``c``, with ``f0 = 1 + (c + 128) / 256`` the start of its 1/256 step
    of [1, 2): the high byte - 128 and the low byte - 128 of ``round(2**fraction_bits ln f0)``,
    and ``round(256 / f0) - 192`` (the slope of ln there, in 1/256)."""
    f0 = 1.0 + (np.arange(-128, 128, dtype=np.float64) + 128.0) / 256.0
    values = np.round(np.log(f0) * (1 << fraction_bits)).astype(np.int64)
    slopes = np.round(256.0 / f0).astype(np.int64) - _SLOPE_OFFSET
    return (((values >> 8) - 128).astype(np.int8), ((values & 0xFF) - 128).astype(np.int8),
            slopes.astype(np.int8))


def log_fraction_bits(scale: float) -> int:
    """Fraction bits of log_softmax's fixed-point result: at most 16, fewer when ``s (x - m)``
    (down to ``-255 s``) and ``ln S`` (below 22) would not fit int32 with them."""
    largest = 255.0 * scale + 22.0
    return max(0, min(_MAX_LOG_FRACTION_BITS, math.floor(math.log2(2.0**30 / largest))))


@register(aten._softmax.default, aten.softmax.int, aten._log_softmax.default, check=check_softmax)
def lower_softmax(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_softmax(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    runtime = masked_scores(node.args[0], ctx.constants.value)
    if runtime is not None:
        scores, mask = runtime[0], None
    else:
        scores, mask = softmax_scores(node, ctx.constants.value)
    if mask is not None and not mask.only_hides:
        raise ctx.fail(node, "the mask added to its input holds values other than 0 and -inf")
    x = ctx.qtensor(scores, node)
    if x.dtype != ts.DType.INT8:
        raise ctx.fail(node, "softmax is lowered for int8 inputs only")
    guard = softmax_guard(node)
    if guard is not None and runtime is None:
        raise ctx.fail(node, "a safe-softmax guard is lowered only with a mask computed from the inputs")
    out = ctx.output_quant(node if guard is None else guard.result)
    if guard is not None:
        ctx.consumed.update(guard.nodes)
    stem = ctx.stem(node)
    # The rows run along the TOSA tensor's last axis: that is where REDUCE_SUM of int32 is
    # native on every Ethos-U (Vela moves other axes with 32-bit transposes).
    axis = canonical_perm(x.rank).index(_softmax_dim(node))
    to_last = tuple(d for d in range(x.rank) if d != axis) + (axis,)
    rows = transpose(ctx, x.name, x.tosa_shape, to_last, x.dtype, f"{stem}_rows")
    rows_shape = permute_shape(x.tosa_shape, to_last)
    if mask is not None:  # the same axis order as the rows (size-1 axes broadcast)
        if node.target == aten._log_softmax.default:
            raise ctx.fail(node, "log_softmax of masked scores is not lowered (only softmax applies a mask)")
        keep = mask.keep.numpy().transpose(canonical_perm(x.rank)).transpose(to_last)
        result = emit_softmax_rows(ctx.builder, rows, rows_shape, x.scale, x.zero_point, out.scale,
                                   out.zero_point, out.dtype, stem, keep)
    else:
        matrix = (1, math.prod(rows_shape[:-1]), rows_shape[-1])
        rows = ctx.reshape(rows, matrix, x.dtype, f"{stem}_matrix")
        if runtime is not None:
            if node.target == aten._log_softmax.default:
                raise ctx.fail(node, "log_softmax of masked scores is not lowered (only softmax applies a mask)")
            hidden = _hidden_matrix(ctx, node, x.rank, to_last, rows_shape, matrix, stem)
            result = emit_softmax_rows(ctx.builder, rows, matrix, x.scale, x.zero_point, out.scale,
                                       out.zero_point, out.dtype, stem, hidden=hidden)
        else:
            emit = emit_log_softmax_rows if node.target == aten._log_softmax.default else emit_softmax_rows
            result = emit(ctx.builder, rows, matrix, x.scale, x.zero_point, out.scale, out.zero_point, out.dtype,
                          stem)
        result = ctx.reshape(result, rows_shape, out.dtype, f"{stem}_unmatrix")
    result = transpose(ctx, result, rows_shape, inverse(to_last), out.dtype, f"{stem}_back")
    ctx.finish(node, out, result, x.tosa_shape, out.dtype, out.scale, out.zero_point)


def _hidden_matrix(ctx: LoweringContext, node: torch.fx.Node, rank: int, to_last: tuple[int, ...],
                   rows_shape: tuple[int, ...], matrix: tuple[int, ...], stem: str) -> str:
    """The runtime mask (BOOL, True where a score is hidden) of softmax ``node``'s masked
    scores, broadcast to the rows and laid out as their ``matrix``."""
    add = node.args[0]
    mask_arg = next(a for a in add.args[:2] if isinstance(a, torch.fx.Node) and a in ctx.values
                    and isinstance(ctx.values[a], QTensor) and ctx.values[a].dtype == ts.DType.BOOL)
    hidden = relayout(ctx, ctx.values[mask_arg], (1,) * (rank - len(mask_arg.meta["val"].shape))
                      + tuple(int(d) for d in mask_arg.meta["val"].shape), f"{stem}_hidden_rank")
    hidden_rows = transpose(ctx, hidden.name, hidden.tosa_shape, to_last, ts.DType.BOOL, f"{stem}_hidden_rows")
    hidden_shape = permute_shape(hidden.tosa_shape, to_last)
    multiples = [r // h for r, h in zip(rows_shape, hidden_shape)]
    if any(m != 1 for m in multiples):
        hidden_rows = ctx.builder.op(ts.Op.TILE, [hidden_rows, ctx.builder.shape_const(multiples, f"{stem}_tile")],
                                     rows_shape, ts.DType.BOOL, None, f"{stem}_hidden_tiled")
    return ctx.reshape(hidden_rows, matrix, ts.DType.BOOL, f"{stem}_hidden_matrix")


@dataclass(frozen=True)
class RowExponentials:
    """Steps 1-2 of the module docstring for the rows along the last axis."""

    difference: Int32  # x - max(x), in [-255, 0]
    exponential: Int32  # E = round(32767 exp(s (x - max(x)))), 0 where a mask hides x
    total: Int32  # S = the row sum of E (one per row)


def emit_row_exponentials(builder: TosaBuilder, fp: FixedPoint, x: str, shape: tuple[int, ...], scale: float,
                          zero_point: int, stem: str, keep: np.ndarray | None = None,
                          hidden: str | None = None) -> RowExponentials:
    """Steps 1-2; only over the elements where ``keep`` (bool, broadcastable to ``shape``) is
    True if given, or where the BOOL tensor ``hidden`` (of ``shape``) is False if given."""
    axis = len(shape) - 1
    row_shape = (*shape[:-1], 1)
    if keep is not None:
        x = _lowest_where_hidden(builder, fp, x, shape, keep, stem)
    if hidden is not None:  # hidden scores at the lowest code: the row maximum is the kept scores'
        lowest = builder.const(np.full((1,) * len(shape), -128, np.int8), f"{stem}_lowest")
        x = builder.op(ts.Op.SELECT, [hidden, lowest, x], shape, ts.DType.INT8, None, f"{stem}_masked")

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
    exponential = _table16(builder, fp, code, shape, (high_table, 0), (low_table, -128), "exp", stem)
    if keep is not None:  # hidden scores weigh nothing
        kept = Int32(builder.const(keep.astype(np.int32), f"{stem}_keep"), keep.shape)
        exponential = fp.mul(exponential, kept, 0, "exp_kept")
    if hidden is not None:
        zero = builder.const(np.zeros((1,) * len(shape), np.int32), f"{stem}_zero")
        exponential = Int32(builder.op(ts.Op.SELECT, [hidden, zero, exponential.name], shape, ts.DType.INT32, None,
                                       f"{stem}_exp_kept"), shape)
        # A row with a kept score sums to at least 32767 (its maximum's own exponential); one
        # hidden entirely sums to 0, and 32767 instead keeps step 3 in range (0 / S = 0).
        floor = fp.constant((1 << EXP_BITS) - 1, len(shape), "sum_floor")
        total = fp.maximum(fp.reduce_sum(exponential, axis, "sum"), floor, "sum_min")
        return RowExponentials(difference, exponential, total)
    return RowExponentials(difference, exponential, fp.reduce_sum(exponential, axis, "sum"))


def _table16(builder: TosaBuilder, fp: FixedPoint, code: str, shape: tuple[int, ...],
             high: tuple[np.ndarray, int], low: tuple[np.ndarray, int], name: str, stem: str) -> Int32:
    """A 16-bit table lookup as two int8 TABLEs: ``(high[code] - zp_h) 256 + low[code] - zp_l``
    (each table with the zero point that brings its bytes into int8)."""
    (high_table, high_zp), (low_table, low_zp) = high, low
    bytes_ = []
    for part, table, zp, factor in (("hi", high_table, high_zp, 256.0), ("lo", low_table, low_zp, 1.0)):
        looked_up = builder.op(ts.Op.TABLE, [code, builder.const(table, f"{stem}_{name}_{part}_table")], shape,
                               ts.DType.INT8, None, f"{stem}_{name}_{part}")
        bytes_.append(Int32(emit_rescale(builder, looked_up, shape, ts.DType.INT8, ts.DType.INT32, factor, zp, 0,
                                         f"{stem}_{name}_{part}32"), shape))
    return fp.add(bytes_[0], bytes_[1], name)


def emit_softmax_rows(builder: TosaBuilder, x: str, shape: tuple[int, ...], scale: float, zero_point: int,
                      out_scale: float, out_zero_point: int, out_dtype: ts.DType, stem: str,
                      keep: np.ndarray | None = None, hidden: str | None = None) -> str:
    """Softmax along the last axis of int8 tensor ``x``, quantized to the output's parameters;
    only over the elements where ``keep`` (bool, broadcastable to ``shape``) is True if given,
    or where the BOOL tensor ``hidden`` is False."""
    fp = FixedPoint(builder, stem)
    rows = emit_row_exponentials(builder, fp, x, shape, scale, zero_point, stem, keep, hidden)

    # 3. E / S in Q23. With S << k normalised and R = 2**60 / (S << k), E * R >> 15 (E < 2**15,
    # R <= 2**30: it fits int32) is E / S * 2**(45 - k); shifting right by 22 - k leaves Q23.
    normalised, k = fp.normalise(rows.total, "sum")
    reciprocal = fp.reciprocal(normalised, "recip")
    scaled = fp.mul(rows.exponential, reciprocal, EXP_BITS, "scaled")
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


def emit_log_softmax_rows(builder: TosaBuilder, x: str, shape: tuple[int, ...], scale: float, zero_point: int,
                          out_scale: float, out_zero_point: int, out_dtype: ts.DType, stem: str) -> str:
    """log_softmax along the last axis of int8 tensor ``x``, quantized to the output's parameters."""
    fp = FixedPoint(builder, stem)
    rows = emit_row_exponentials(builder, fp, x, shape, scale, zero_point, stem)
    rank = len(shape)
    fraction = log_fraction_bits(scale)
    one = float(1 << fraction)

    # s (x - m) in fixed point: x - m (at most 9 bits) times a 31-bit multiplier, shifted.
    multiplier, shift = quantize_scale(scale * one)
    shifted = fp.mul(rows.difference, fp.constant(multiplier, rank, "scale"), shift, "shifted")

    # 3. ln(S / 32767) = ln f + (30 - k) ln 2 - ln 32767 with S << k = f 2**30.
    normalised, k = fp.normalise(rows.total, "sum")
    row_shape = normalised.shape
    index_shift = fp.constant(_LOG_INDEX_SHIFT, rank, "index_shift")
    top = fp.shift_right(normalised, index_shift, "top")
    below = fp.sub(normalised, fp.shift_left(top, index_shift, "top_bits"), "below")  # (f - f0) 2**30
    index = fp.sub(top, fp.constant(_LOG_INDEX_OFFSET, rank, "index_offset"), "index")
    code = emit_rescale(builder, index.name, row_shape, ts.DType.INT32, ts.DType.INT8, 1.0, 0, 0, f"{stem}_log_code")
    high_table, low_table, slope_table = log_tables(fraction)
    log_f0 = _table16(builder, fp, code, row_shape, (high_table, -128), (low_table, -128), "log", stem)
    slope = builder.op(ts.Op.TABLE, [code, builder.const(slope_table, f"{stem}_slope_table")], row_shape,
                       ts.DType.INT8, None, f"{stem}_slope")
    slope32 = fp.add(Int32(emit_rescale(builder, slope, row_shape, ts.DType.INT8, ts.DType.INT32, 1.0, 0, 0,
                                        f"{stem}_slope32"), row_shape),
                     fp.constant(_SLOPE_OFFSET, rank, "slope_offset"), "slope")
    # (f - f0) / f0 = below 2**-30 * slope32 2**-8: below < 2**22 and slope32 <= 2**8 fit int32.
    step = fp.mul(below, slope32, NORMALISED_BITS - 1 + 8 - fraction, "log_step")
    log_f = fp.add(log_f0, step, "log_f")
    ln2 = fp.mul(k, fp.constant(round(math.log(2.0) * one), rank, "ln2"), 0, "k_ln2")
    offset = round((NORMALISED_BITS - 1) * math.log(2.0) * one) - round(math.log((1 << EXP_BITS) - 1) * one)
    log_sum = fp.sub(fp.add(log_f, fp.constant(offset, rank, "log_offset"), "log_sum_f"), ln2, "log_sum")
    result = fp.sub(shifted, log_sum, "result")
    return emit_rescale(builder, result.name, shape, ts.DType.INT32, out_dtype, 1.0 / (one * out_scale), 0,
                        out_zero_point, f"{stem}_out")
