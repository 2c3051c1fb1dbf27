"""Comparisons, logical operators, any and where: the mask logic models compute from
integer side inputs (Ethos-U85; Vela lists these operators for the U85 only).

* ``ge/gt/le/lt/eq/ne`` (Tensor and Scalar) of int32 tensors -> GREATER_EQUAL / GREATER /
  EQUAL (operands swapped for le/lt, LOGICAL_NOT after EQUAL for ne): a BOOL tensor. Both
  operands are exact integers (a ``lengths`` input, an ``arange`` folded to a constant); a
  comparison of quantized values would compare rounded codes, so it is not lowered.
* ``logical_not/and/or`` of BOOL tensors -> LOGICAL_NOT / AND / OR; ``any.dim`` ->
  REDUCE_ANY with the rows laid out as one ``(1, rows, length)`` matrix (a batch above 1
  folds into the rows; core ATen writes ``all`` as ``not any(not x)``).
* ``where(condition, a, b)`` of quantized tensors -> SELECT, both branches at the output's
  quantization. ``where(hidden, -inf, 0)`` (how a padding mask becomes an additive one)
  has no integer code: it is bound to the BOOL tensor ``hidden`` itself, which the views
  after it move and the softmax that adds it applies (softmax.py); nothing else may read it.
* ``full_like`` depends on its input's shape only: a constant.

Bool tensors are TOSA BOOL values bound as :class:`QTensor` with scale 1 and zero point 0;
int32 side inputs are int32 :class:`QTensor` values the same way (never quantized).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.constraints import operator_objection
from kiln.backends.arm.tosa.builder import attribute
from kiln.backends.arm.tosa.context import LoweringContext, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.reshape import relayout, transpose
from kiln.backends.arm.tosa.values import ConstTensor, QTensor, canonical_perm, inverse, permute_shape
from kiln.passes.delegation import operator_name
from kiln.passes.safe_softmax import applies_a_mask

aten = torch.ops.aten

# target -> (TOSA comparison, operands swapped, result negated)
_COMPARISONS = {
    aten.ge.Tensor: (ts.Op.GREATER_EQUAL, False, False), aten.ge.Scalar: (ts.Op.GREATER_EQUAL, False, False),
    aten.gt.Tensor: (ts.Op.GREATER, False, False), aten.gt.Scalar: (ts.Op.GREATER, False, False),
    aten.le.Tensor: (ts.Op.GREATER_EQUAL, True, False), aten.le.Scalar: (ts.Op.GREATER_EQUAL, True, False),
    aten.lt.Tensor: (ts.Op.GREATER, True, False), aten.lt.Scalar: (ts.Op.GREATER, True, False),
    aten.eq.Tensor: (ts.Op.EQUAL, False, False), aten.eq.Scalar: (ts.Op.EQUAL, False, False),
    aten.ne.Tensor: (ts.Op.EQUAL, False, True), aten.ne.Scalar: (ts.Op.EQUAL, False, True),
}
_LOGICAL = {aten.logical_not.default: ts.Op.LOGICAL_NOT, aten.logical_and.default: ts.Op.LOGICAL_AND,
            aten.logical_or.default: ts.Op.LOGICAL_OR}
# (core ATen writes all.dim as not(any(not x)).)
_REDUCTIONS = {aten.any.dim: ("ReduceAny", ts.Op.REDUCE_ANY)}


def _dtype(arg: Any) -> torch.dtype | None:
    value = arg.meta.get("val") if isinstance(arg, torch.fx.Node) else None
    return value.dtype if isinstance(value, torch.Tensor) else None


def is_infinity_test_of_masked_scores(node: torch.fx.Node) -> bool:
    """``eq(scores + mask, -inf)`` of a safe-softmax guard: the softmax that applies the mask
    lowers the guard with it (softmax.py), so this comparison is never emitted."""
    return (node.target == aten.eq.Scalar and isinstance(node.args[0], torch.fx.Node)
            and node.args[1] == -math.inf and applies_a_mask(node.args[0]))


def check_compare(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if is_infinity_test_of_masked_scores(node):
        return None
    if (reason := operator_objection(operator_name(node), compile_spec)) is not None:
        return reason
    for arg in node.args[:2]:
        if isinstance(arg, torch.fx.Node) and _dtype(arg) != torch.int32:
            return (f"comparison of a {_dtype(arg)} tensor is not lowered (int32 tensors only: quantized "
                    "values would be compared as rounded codes)")
        if not isinstance(arg, (torch.fx.Node, int)) or isinstance(arg, bool):
            return f"comparison with {arg!r} is not lowered (int32 tensors and integer scalars only)"
    if len(node.meta["val"].shape) > 4:
        return "comparison of rank above 4 is not lowered"
    return None


def _int32_operand(ctx: LoweringContext, arg: Any, node: torch.fx.Node, rank: int) -> str:
    """An int32 operand at the comparison's rank, in TOSA layout."""
    if not isinstance(arg, torch.fx.Node):
        return ctx.builder.const(np.full((1,) * rank, int(arg), np.int32), f"{ctx.stem(node)}_scalar")
    value = ctx.value(arg, node)
    if isinstance(value, ConstTensor):
        data = np.asarray(value.data).astype(np.int32).reshape((1,) * (rank - value.data.ndim) + value.data.shape)
        return ctx.builder.const(data.transpose(canonical_perm(rank)), f"{ctx.stem(node)}_const")
    if value.dtype != ts.DType.INT32:
        raise ctx.fail(node, f"operand {arg.name} is not an int32 tensor")
    return relayout(ctx, value, (1,) * (rank - value.rank) + value.shape, f"{ctx.stem(node)}_rank").name


def _bool(node: torch.fx.Node, name: str, shape: tuple[int, ...]) -> QTensor:
    return QTensor(name, shape, ts.DType.BOOL, 1.0, 0)


def _bool_operand(ctx: LoweringContext, arg: Any, node: torch.fx.Node, rank: int) -> QTensor:
    """A bool operand (computed, or a constant such as a test of an ``arange``) at ``rank``."""
    value = ctx.value(arg, node)
    if isinstance(value, ConstTensor) and value.data.dtype == np.bool_:
        shape = (1,) * (rank - value.data.ndim) + value.data.shape
        data = value.data.reshape(shape).transpose(canonical_perm(rank))
        return _bool(node, ctx.builder.const(data, f"{ctx.stem(node)}_const"), shape)
    if not isinstance(value, QTensor) or value.dtype != ts.DType.BOOL:
        raise ctx.fail(node, f"operand {arg} is not a bool tensor")
    return relayout(ctx, value, (1,) * (rank - value.rank) + value.shape, f"{ctx.stem(node)}_rank")


@register(*_COMPARISONS, check=check_compare)
def lower_compare(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_compare(node, ctx.compile_spec)
    if reason is not None or is_infinity_test_of_masked_scores(node):
        raise ctx.fail(node, reason or "the test of masked scores for -inf is lowered by their softmax only")
    op, swapped, negated = _COMPARISONS[node.target]
    shape = ctx.shape_of(node)
    a, b = (_int32_operand(ctx, arg, node, len(shape)) for arg in node.args[:2])
    if swapped:
        a, b = b, a
    tosa_shape = _bool(node, "", shape).tosa_shape
    stem = ctx.stem(node)
    result = ctx.builder.op(op, [a, b], tosa_shape, ts.DType.BOOL, None, stem)
    if negated:
        result = ctx.builder.op(ts.Op.LOGICAL_NOT, [result], tosa_shape, ts.DType.BOOL, None, f"{stem}_not")
    ctx.bind(node, _bool(node, result, shape))


def check_logical(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if (reason := operator_objection(operator_name(node), compile_spec)) is not None:
        return reason
    dtypes = {_dtype(arg) for arg in node.args[:2] if isinstance(arg, torch.fx.Node)}
    if dtypes != {torch.bool}:
        return f"logical operators are lowered for bool tensors only, got {sorted(map(str, dtypes))}"
    return None


@register(*_LOGICAL, check=check_logical)
def lower_logical(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_logical(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    shape = ctx.shape_of(node)
    arity = 1 if node.target == aten.logical_not.default else 2
    operands = [_bool_operand(ctx, arg, node, len(shape)).name for arg in node.args[:arity]]
    tosa_shape = _bool(node, "", shape).tosa_shape
    ctx.bind(node, _bool(node, ctx.builder.op(_LOGICAL[node.target], operands, tosa_shape, ts.DType.BOOL, None,
                                              ctx.stem(node)), shape))


def check_any(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if (reason := operator_objection(operator_name(node), compile_spec)) is not None:
        return reason
    if _dtype(node.args[0]) != torch.bool:
        return f"any of a {_dtype(node.args[0])} tensor is not lowered (bool only)"
    if len(node.args[0].meta["val"].shape) > 4:
        return "any of rank above 4 is not lowered"
    dims = scalar_arg(node, 1, "dim", None)
    if isinstance(dims, (list, tuple)) and len(dims) != 1:
        return "any over several dimensions is not lowered"
    return None


@register(*_REDUCTIONS, check=check_any)
def lower_any(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_any(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    value = _bool_operand(ctx, node.args[0], node, len(node.args[0].meta["val"].shape))
    dim = scalar_arg(node, 1, "dim", None)
    dim = int(dim[0] if isinstance(dim, (list, tuple)) else dim) % max(value.rank, 1)
    stem = ctx.stem(node)
    # Rows along the last TOSA axis, folded into one (1, rows, length) matrix: no batch above 1.
    axis = canonical_perm(value.rank).index(dim)
    to_last = tuple(d for d in range(value.rank) if d != axis) + (axis,)
    rows_shape = permute_shape(value.tosa_shape, to_last)
    rows = transpose(ctx, value.name, value.tosa_shape, to_last, ts.DType.BOOL, f"{stem}_rows")
    length = rows_shape[-1]
    matrix = ctx.reshape(rows, (1, math.prod(rows_shape[:-1]), length), ts.DType.BOOL, f"{stem}_matrix")
    kind, op = _REDUCTIONS[node.target]
    reduced = ctx.builder.op(op, [matrix], (1, math.prod(rows_shape[:-1]), 1), ts.DType.BOOL,
                             attribute(kind, 2), stem)
    kept_shape = (*rows_shape[:-1], 1)
    reduced = ctx.reshape(reduced, kept_shape, ts.DType.BOOL, f"{stem}_rows_back")
    result = transpose(ctx, reduced, kept_shape, inverse(to_last), ts.DType.BOOL, f"{stem}_back")
    keep_shape = tuple(1 if d == dim else s for d, s in enumerate(value.shape))
    bound = _bool(node, result, keep_shape)
    ctx.bind(node, relayout(ctx, bound, ctx.shape_of(node), f"{stem}_dims"))


def _fill(value: Any) -> float | None:
    """The one value a constant holds everywhere, or None."""
    if not isinstance(value, ConstTensor) or value.data.size == 0:
        return None
    real = np.asarray(value.dequantized() if value.is_quantized else value.data, dtype=np.float64).reshape(-1)
    return float(real[0]) if bool((real == real[0]).all()) else None


def check_where(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if (reason := operator_objection(operator_name(node), compile_spec)) is not None:
        return reason
    if _dtype(node.args[0]) != torch.bool:
        return f"where with a {_dtype(node.args[0])} condition is not lowered"
    if len(node.meta["val"].shape) > 4:
        return "where of rank above 4 is not lowered"
    return None


@register(aten.where.self, check=check_where)
def lower_where(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_where(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    shape = ctx.shape_of(node)
    stem = ctx.stem(node)
    condition = _bool_operand(ctx, node.args[0], node, len(shape))
    fills = [_fill(ctx.value(arg, node)) if isinstance(arg, torch.fx.Node) else None for arg in node.args[1:3]]
    if fills in ([-math.inf, 0.0], [0.0, -math.inf]):
        # An additive mask: bound to where it hides (-inf), for the softmax that adds it.
        hidden = condition
        if fills[0] == 0.0:
            hidden = hidden.renamed(ctx.builder.op(ts.Op.LOGICAL_NOT, [hidden.name], hidden.tosa_shape,
                                                   ts.DType.BOOL, None, f"{stem}_hidden"))
        ctx.bind(node, hidden)
        return
    out = ctx.output_quant(node)
    branches = []
    for index, arg in enumerate(node.args[1:3]):
        constant = ctx.value(arg, node) if isinstance(arg, torch.fx.Node) else None
        if isinstance(constant, ConstTensor) and not constant.is_quantized:
            # A float constant (zeros_like of the other branch): quantized as the result is.
            codes = [out.quantized(v) for v in np.asarray(constant.data, np.float32).reshape(-1)]
            ctx.bind(arg, ConstTensor(np.asarray(codes, np.int8).reshape(constant.data.shape),
                                      np.array([out.scale]), np.array([out.zero_point]), None))
        value = ctx.qtensor(arg, node)
        value = ctx.requantize(value, out.scale, out.zero_point, out.dtype, f"{stem}_{index}")
        branches.append(relayout(ctx, value, (1,) * (len(shape) - value.rank) + value.shape, f"{stem}_{index}").name)
    tosa_shape = QTensor("", shape, out.dtype, out.scale, out.zero_point).tosa_shape
    selected = ctx.builder.op(ts.Op.SELECT, [condition.name, *branches], tosa_shape, out.dtype, None, stem)
    ctx.finish(node, out, selected, tosa_shape, out.dtype, out.scale, out.zero_point)


@register(aten.full_like.default)
def lower_full_like(ctx: LoweringContext, node: torch.fx.Node) -> None:
    """A tensor of one value in its input's shape: a constant (quantized by the quantize
    node after it, if any)."""
    fake = node.meta["val"]
    dtype = {torch.float32: np.float32, torch.int32: np.int32, torch.bool: np.bool_}.get(fake.dtype)
    if dtype is None or not isinstance(node.args[1], (int, float)):
        raise ctx.fail(node, f"full_like of {fake.dtype} with {node.args[1]!r} is not lowered")
    ctx.bind(node, ConstTensor(np.full(tuple(int(d) for d in fake.shape), node.args[1], dtype)))
