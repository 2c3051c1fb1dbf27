"""Layout-only operators: view/reshape/flatten/squeeze/unsqueeze, permute/transpose,
clone and getitem. They move int8 data without changing its quantization.

Because rank-4 tensors live as NHWC in TOSA while PyTorch's shapes are NCHW, a
reshape is done in logical (NCHW) order: TRANSPOSE to logical order, RESHAPE,
TRANSPOSE to the result's layout. Transposes that only move size-1 dims are
RESHAPEs (no data moves), which keeps e.g. ``flatten`` after a global pool free.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.builder import attribute
from kiln.backends.arm.tosa.context import LoweringContext
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.vela_limits import transpose_objection
from kiln.backends.arm.tosa.values import (
    ConstTensor, QTensor, canonical_perm, compose, inverse, moves_data, permute_shape,
)
from kiln.passes.as_strided import reshape_objection

aten = torch.ops.aten

_BITS = {ts.DType.INT8: 8, ts.DType.INT16: 16, ts.DType.INT32: 32, ts.DType.BOOL: 8}


def transpose(ctx: LoweringContext, source: str, shape: Sequence[int], perm: Sequence[int],
              dtype: ts.DType, stem: str) -> str:
    """``source`` (TOSA shape ``shape``) permuted by ``perm``; a RESHAPE if no data moves."""
    perm = tuple(perm)
    if perm == tuple(range(len(perm))):
        return source
    out_shape = permute_shape(shape, perm)
    if not moves_data(shape, perm):
        return ctx.reshape(source, out_shape, dtype, stem)
    bits = _BITS.get(dtype, 8)
    objection = transpose_objection(shape, perm, bits, ctx.target) if ctx.target else None
    if objection is not None:
        squeezed, squeezed_perm = _without_unit_axes(shape, perm)
        if transpose_objection(squeezed, squeezed_perm, bits, ctx.target) is not None:
            ctx.refuse_for_vela(objection)
        else:
            # The same data movement without the size-1 axes: a 1-D convolution's [N, C, 1, L]
            # with N > 1 is a 4-D transpose the Ethos-U55 cannot do, its [N, C, L] a 3-D one
            # it does in one operation. The reshapes around it move no data.
            flat = ctx.reshape(source, squeezed, dtype, f"{stem}_squeezed")
            moved = ctx.builder.op(ts.Op.TRANSPOSE, [flat], permute_shape(squeezed, squeezed_perm), dtype,
                                   attribute("Transpose", list(squeezed_perm)), stem)
            return ctx.reshape(moved, out_shape, dtype, f"{stem}_unsqueezed")
    return ctx.builder.op(ts.Op.TRANSPOSE, [source], out_shape, dtype, attribute("Transpose", list(perm)), stem)


def _without_unit_axes(shape: Sequence[int], perm: Sequence[int]) -> tuple[list[int], list[int]]:
    """``shape`` and ``perm`` with the axes of size 1 left out (the permutation renumbered)."""
    kept = [axis for axis in range(len(shape)) if shape[axis] != 1]
    position = {axis: index for index, axis in enumerate(kept)}
    return [int(shape[axis]) for axis in kept], [position[axis] for axis in perm if axis in position]


def relayout(ctx: LoweringContext, value: QTensor, shape: Sequence[int], stem: str) -> QTensor:
    """``value`` reshaped to the logical ``shape`` (a view in PyTorch terms)."""
    shape = tuple(int(d) for d in shape)
    if shape == value.shape:
        return value
    in_perm, out_perm = canonical_perm(value.rank), canonical_perm(len(shape))
    logical = transpose(ctx, value.name, value.tosa_shape, inverse(in_perm), value.dtype, f"{stem}_nchw")
    reshaped = ctx.reshape(logical, shape, value.dtype, f"{stem}_view")
    result = transpose(ctx, reshaped, shape, out_perm, value.dtype, f"{stem}_nhwc")
    return value.renamed(result, shape)


def permute(ctx: LoweringContext, value: QTensor, perm: Sequence[int], stem: str) -> QTensor:
    """``value.permute(perm)`` as one TOSA TRANSPOSE between canonical layouts."""
    rank = value.rank
    perm = tuple(int(p) % rank for p in perm)
    shape = permute_shape(value.shape, perm)
    # tosa_out = logical_out.permute(C) = tosa_in.permute(inv(C) then perm then C)
    total = compose(compose(inverse(canonical_perm(rank)), perm), canonical_perm(rank))
    result = transpose(ctx, value.name, value.tosa_shape, total, value.dtype, stem)
    return value.renamed(result, shape)


def _const_view(ctx: LoweringContext, node: torch.fx.Node, value: ConstTensor,
                shape: tuple[int, ...]) -> ConstTensor:
    if value.axis is not None and np.asarray(value.scales).size > 1:
        if shape[0] != value.shape[value.axis] or value.axis != 0:
            raise ctx.fail(node, "view of a per-channel constant that moves its channel axis")
    return ConstTensor(value.data.reshape(shape), value.scales, value.zero_points, value.axis)


@register(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.view_copy.default,
          aten.flatten.using_ints, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
          aten.unsqueeze.default, aten.unflatten.int)
def lower_view(ctx: LoweringContext, node: torch.fx.Node) -> None:
    shape = ctx.shape_of(node)
    value = ctx.value(node.args[0], node)
    if isinstance(value, ConstTensor):
        ctx.bind(node, _const_view(ctx, node, value, shape))
        return
    ctx.bind(node, relayout(ctx, value, shape, ctx.stem(node)))


def check_as_strided(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    """A RESHAPE when it only restrides a row-major tensor; any other read of the storage
    (a gather) has no TOSA operator and stays on the CPU's as_strided_copy kernel."""
    reason = reshape_objection(node)
    return None if reason is None else f"{reason}; it runs on the CPU's as_strided_copy kernel"


@register(aten.as_strided.default, check=check_as_strided)
def lower_as_strided(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_as_strided(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    lower_view(ctx, node)


def _permutation(node: torch.fx.Node, rank: int) -> tuple[int, ...]:
    if node.target in (aten.permute.default, aten.permute_copy.default):
        return tuple(int(p) % rank for p in node.args[1])
    if node.target in (aten.t.default, aten.numpy_T.default):
        return tuple(reversed(range(rank)))
    first, second = int(node.args[1]) % rank, int(node.args[2]) % rank
    perm = list(range(rank))
    perm[first], perm[second] = perm[second], perm[first]
    return tuple(perm)


def check_permute(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    arg = node.args[0]
    shape = tuple(arg.meta["val"].shape) if isinstance(arg, torch.fx.Node) else ()
    rank = len(shape)
    if rank > 6:
        return f"transpose of a rank-{rank} tensor is not lowered (rank <= 6)"
    return None


@register(aten.permute.default, aten.permute_copy.default, aten.t.default, aten.transpose.int,
          aten.numpy_T.default, check=check_permute)
def lower_permute(ctx: LoweringContext, node: torch.fx.Node) -> None:
    value = ctx.value(node.args[0], node)
    perm = _permutation(node, len(value.shape))
    if isinstance(value, ConstTensor):
        ctx.bind(node, value.permuted(perm))
        return
    ctx.bind(node, permute(ctx, value, perm, ctx.stem(node)))


@register(aten.clone.default, aten.alias.default, aten.detach.default, aten.contiguous.default,
          aten.dropout.default, aten._to_copy.default)
def lower_identity(ctx: LoweringContext, node: torch.fx.Node) -> None:
    if node.target == aten._to_copy.default and node.kwargs.get("dtype") not in (None, torch.float32):
        raise ctx.fail(node, f"dtype conversion to {node.kwargs.get('dtype')} is not lowered")
    ctx.bind(node, ctx.value(node.args[0], node))


def check_expand(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    source, result = node.args[0].meta["val"].shape, node.meta["val"].shape
    if len(result) > 4 and tuple(source) != tuple(result):
        return f"expand from {list(source)} to {list(result)} (a broadcast copy of rank above 4) is not lowered"
    return None


@register(aten.expand.default, aten.expand_copy.default, check=check_expand)
def lower_expand(ctx: LoweringContext, node: torch.fx.Node) -> None:
    """An expand to the tensor's own shape (matmul decompositions emit it) is a no-op; a
    broadcast is a TILE of the size-1 axes (a constant is broadcast at compile time)."""
    reason = check_expand(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    value = ctx.value(node.args[0], node)
    shape = ctx.shape_of(node)
    if tuple(value.shape) == shape:
        ctx.bind(node, value)
        return
    if isinstance(value, ConstTensor):
        axis = None if value.axis is None else value.axis + len(shape) - value.data.ndim
        ctx.bind(node, ConstTensor(np.ascontiguousarray(np.broadcast_to(value.data, shape)), value.scales,
                                   value.zero_points, axis))
        return
    stem = ctx.stem(node)
    value = relayout(ctx, value, (1,) * (len(shape) - value.rank) + tuple(value.shape), f"{stem}_rank")
    multiples = permute_shape([s // d for s, d in zip(shape, value.shape)], canonical_perm(len(shape)))
    tosa_shape = permute_shape(shape, canonical_perm(len(shape)))
    tiled = ctx.builder.op(ts.Op.TILE, [value.name, ctx.builder.shape_const(list(multiples), f"{stem}_multiples")],
                           tosa_shape, value.dtype, None, stem)
    ctx.bind(node, value.renamed(tiled, shape))


def lower_getitem(ctx: LoweringContext, node: torch.fx.Node) -> None:
    """``getitem(x, i)`` of a split (its parts), or ``getitem(x, 0)`` of a multi-output op whose
    first output was bound (max_pool2d)."""
    source, index = node.args[0], node.args[1]
    if not node.users:
        return  # an output nobody reads (max pool's indices)
    if source in ctx.parts:
        ctx.bind(node, ctx.parts[source][index])
        return
    if index != 0 or source not in ctx.values:
        raise ctx.fail(node, f"output {index} of {source} is not lowered")
    ctx.bind(node, ctx.values[source])
