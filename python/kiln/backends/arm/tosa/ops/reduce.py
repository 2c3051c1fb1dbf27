"""mean / sum over any dims of an int8 tensor -> TRANSPOSE, RESHAPE, REDUCE_SUM (int32), RESCALE.

The reduced dims are moved behind the kept ones (in PyTorch's order) with one int8
TRANSPOSE and merged: the tensor becomes [kept, reduced] and one REDUCE_SUM along the last
axis - where Ethos-U55's REDUCE_SUM is native - sums each row exactly in int32. The RESCALE
to the output divides by the count for a mean. A mean over H and W of an NCHW tensor is a
global average pool (pooling.py), which Vela runs faster.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import torch
import tosa_serializer as ts

from kiln.backends.arm.constraints import reduction_objection
from kiln.backends.arm.tosa.builder import attribute
from kiln.backends.arm.tosa.context import LoweringContext, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.reshape import transpose
from kiln.backends.arm.tosa.ops.rescale import emit_rescale
from kiln.backends.arm.tosa.values import QTensor, canonical_perm, compose, inverse
from kiln.delegation.nodes import quantized_dtype

aten = torch.ops.aten



def reduced_dims(node: torch.fx.Node) -> list[int]:
    rank = len(node.args[0].meta["val"].shape)
    dims = scalar_arg(node, 1, "dim", None)
    if dims is None or (isinstance(dims, (list, tuple)) and not dims):
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return sorted({int(d) % rank for d in dims})


def is_global_pool(node: torch.fx.Node) -> bool:
    """A mean over H and W of a rank-4 (NCHW) tensor: AVG_POOL2D's job."""
    return len(node.args[0].meta["val"].shape) == 4 and reduced_dims(node) == [2, 3]


def check_reduction(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    shape = tuple(node.args[0].meta["val"].shape)
    if len(shape) > 4:
        return f"reduction of a rank-{len(shape)} tensor is not lowered (rank <= 4)"
    if scalar_arg(node, 3, "dtype", None) is not None or node.kwargs.get("dtype") is not None:
        return "a reduction with a dtype argument is not lowered"
    return reduction_objection(compile_spec, [shape[d] for d in reduced_dims(node)], input_bits(node))


def input_bits(node: torch.fx.Node) -> int:
    """The bits of a reduction's quantized input (its dequantize node); 8 when not known."""
    dtype = quantized_dtype(node.args[0])
    return 8 if dtype is None else dtype.itemsize * 8


def rows_of(ctx: LoweringContext, x: QTensor, dims: list[int], stem: str) -> tuple[str, int, int]:
    """``x`` as an int8 TOSA tensor [kept, reduced] (kept dims in PyTorch's order): its name,
    the kept count and the reduced count."""
    kept = [d for d in range(x.rank) if d not in dims]
    logical_order = tuple(kept + dims)
    # TOSA layout -> logical order -> kept first: one TRANSPOSE.
    perm = compose(inverse(canonical_perm(x.rank)), logical_order)
    moved = transpose(ctx, x.name, x.tosa_shape, perm, x.dtype, f"{stem}_order")
    kept_count = math.prod(x.shape[d] for d in kept)
    reduced_count = math.prod(x.shape[d] for d in dims)
    shape = tuple(x.shape[d] for d in logical_order)
    rows = ctx.reshape(moved, (kept_count, reduced_count), x.dtype, f"{stem}_rows") if len(shape) != 2 or \
        shape != (kept_count, reduced_count) else moved
    return rows, kept_count, reduced_count


def lower_reduction(ctx: LoweringContext, node: torch.fx.Node) -> None:
    """mean.dim / sum.dim_IntList over any dims (see the module docstring)."""
    reason = check_reduction(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    x = ctx.qtensor(node.args[0], node)
    out = ctx.output_quant(node)
    stem = ctx.stem(node)
    rows, kept, reduced = rows_of(ctx, x, reduced_dims(node), stem)
    wide = emit_rescale(ctx.builder, rows, (kept, reduced), x.dtype, ts.DType.INT32, 1.0, x.zero_point, 0,
                        f"{stem}_wide")
    total = ctx.builder.op(ts.Op.REDUCE_SUM, [wide], (kept, 1), ts.DType.INT32, attribute("ReduceSum", 1),
                           f"{stem}_sum")
    scale = x.scale / reduced if node.target == aten.mean.dim else x.scale
    ctx.finish(node, out, total, (kept, 1), ts.DType.INT32, scale, logical_shape=(kept, 1))


@register(aten.sum.dim_IntList, check=check_reduction)
def lower_sum(ctx: LoweringContext, node: torch.fx.Node) -> None:
    lower_reduction(ctx, node)
