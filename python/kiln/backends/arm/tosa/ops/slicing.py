"""slice / select / split_with_sizes (chunk, split) -> SLICE (+ RESHAPE for select).

They pick a box of the int8 tensor without changing its quantization. The box is cut in the
TOSA layout (NHWC for rank 4), on the axis the PyTorch dim lands on. ``split_with_sizes``
binds a list of tensors; its ``getitem`` nodes pick from it.
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from typing import Any

import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.context import LoweringContext, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.reshape import relayout
from kiln.backends.arm.tosa.values import QTensor, canonical_perm

aten = torch.ops.aten


def slice_box(ctx: LoweringContext, x: QTensor, dim: int, start: int, size: int, stem: str) -> QTensor:
    """``x`` narrowed to ``[start, start + size)`` along logical ``dim`` (one SLICE)."""
    if start == 0 and size == x.shape[dim]:
        return x
    axis = canonical_perm(x.rank).index(dim)
    shape = list(x.shape)
    shape[dim] = size
    result = QTensor("", tuple(shape), x.dtype, x.scale, x.zero_point)
    starts = [0] * x.rank
    starts[axis] = start
    operands = [x.name, ctx.builder.shape_const(starts, f"{stem}_start"),
                ctx.builder.shape_const(list(result.tosa_shape), f"{stem}_size")]
    return result.renamed(ctx.builder.op(ts.Op.SLICE, operands, result.tosa_shape, x.dtype, None, stem))


def _slice_range(node: torch.fx.Node) -> tuple[int, int, int, int]:
    """(dim, start, end, step) of aten.slice.Tensor with PyTorch's clamping of start/end."""
    shape = tuple(node.args[0].meta["val"].shape)
    dim = int(scalar_arg(node, 1, "dim", 0)) % len(shape)
    size = shape[dim]
    start, end = scalar_arg(node, 2, "start", None), scalar_arg(node, 3, "end", None)
    start = 0 if start is None else int(start)
    end = size if end is None or end == sys.maxsize else int(end)
    start, end = (start + size if start < 0 else start), (end + size if end < 0 else end)
    return dim, min(max(start, 0), size), min(max(end, 0), size), int(scalar_arg(node, 4, "step", 1))


def check_slice(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if len(node.args[0].meta["val"].shape) > 6:
        return "slicing a tensor of rank above 6 is not lowered"
    dim, start, end, step = _slice_range(node)
    if step != 1:
        return f"slice with step {step} is not lowered (only step 1)"
    if end <= start:
        return "an empty slice is not lowered"
    return None


@register(aten.slice.Tensor, aten.slice_copy.Tensor, check=check_slice)
def lower_slice(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_slice(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    dim, start, end, _ = _slice_range(node)
    ctx.bind(node, slice_box(ctx, ctx.qtensor(node.args[0], node), dim, start, end - start, ctx.stem(node)))


@register(aten.select.int, aten.select_copy.int)
def lower_select(ctx: LoweringContext, node: torch.fx.Node) -> None:
    x = ctx.qtensor(node.args[0], node)
    dim = int(node.args[1]) % x.rank
    index = int(node.args[2]) % x.shape[dim]
    stem = ctx.stem(node)
    box = slice_box(ctx, x, dim, index, 1, stem)
    ctx.bind(node, relayout(ctx, box, ctx.shape_of(node), f"{stem}_drop"))


def split_sizes(node: torch.fx.Node) -> tuple[int, list[int]]:
    shape = tuple(node.args[0].meta["val"].shape)
    dim = int(scalar_arg(node, 2, "dim", 0)) % len(shape)
    return dim, [int(s) for s in node.args[1]]


@register(aten.split_with_sizes.default, aten.split_with_sizes_copy.default)
def lower_split(ctx: LoweringContext, node: torch.fx.Node) -> None:
    x = ctx.qtensor(node.args[0], node)
    dim, sizes = split_sizes(node)
    stem = ctx.stem(node)
    parts: list[QTensor] = []
    start = 0
    for index, size in enumerate(sizes):
        parts.append(slice_box(ctx, x, dim, start, size, f"{stem}_{index}"))
        start += size
    ctx.bind_parts(node, parts)
