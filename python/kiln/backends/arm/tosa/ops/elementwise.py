"""add / sub / mul of two quantized tensors -> RESCALE to int32, ADD/SUB/MUL, RESCALE.

add/sub: both operands go to int32 at a common scale ``2 * max(s_a, s_b) / 2**20``
(the 20-bit headroom TFLite and ExecuTorch use: int8 differences times 2**19 still
fit int32 after the addition; 15 bits when an operand is int16, whose values times 2**14
fit the same way), so the sum is exact before the output RESCALE.
mul: operands go to int32 without their zero points; the product's scale is
``s_a * s_b``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.context import LoweringContext, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.rescale import to_int32
from kiln.backends.arm.tosa.ops.reshape import relayout
from kiln.passes.safe_softmax import applies_a_mask
from kiln.backends.arm.tosa.values import QTensor

aten = torch.ops.aten

_ADD_HEADROOM_BITS = 20
_ADD_HEADROOM_BITS_INT16 = 15


def check_binary(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if not all(isinstance(a, torch.fx.Node) for a in node.args[:2]):
        return "an operand is a Python scalar (only tensor operands are lowered)"
    if node.target in (aten.add.Tensor, aten.sub.Tensor) and scalar_arg(node, 2, "alpha", 1) != 1:
        return "alpha != 1 is not lowered"
    ranks = [len(a.meta["val"].shape) for a in node.args[:2]]
    if max(ranks) > 4:
        return f"operands of rank {max(ranks)} are not lowered (rank <= 4)"
    return None


def broadcast_operands(ctx: LoweringContext, node: torch.fx.Node, a: QTensor, b: QTensor
                       ) -> tuple[QTensor, QTensor, tuple[int, ...]]:
    """Both operands at the output's rank (TOSA broadcasts only between equal ranks)."""
    out_shape = ctx.shape_of(node)
    rank = len(out_shape)
    stem = ctx.stem(node)
    if a.rank < rank:
        a = relayout(ctx, a, (1,) * (rank - a.rank) + a.shape, f"{stem}_a_rank")
    if b.rank < rank:
        b = relayout(ctx, b, (1,) * (rank - b.rank) + b.shape, f"{stem}_b_rank")
    return a, b, QTensor("", out_shape, a.dtype, 1.0, 0).tosa_shape


@register(aten.add.Tensor, aten.sub.Tensor, check=check_binary)
def lower_add_sub(ctx: LoweringContext, node: torch.fx.Node) -> None:
    if applies_a_mask(node):
        return  # the softmax it feeds applies the mask (softmax.py)
    reason = check_binary(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    a, b = ctx.qtensor(node.args[0], node), ctx.qtensor(node.args[1], node)
    out = ctx.output_quant(node)
    a, b, shape = broadcast_operands(ctx, node, a, b)
    stem = ctx.stem(node)
    headroom = _ADD_HEADROOM_BITS_INT16 if ts.DType.INT16 in (a.dtype, b.dtype) else _ADD_HEADROOM_BITS
    common = 2.0 * max(a.scale, b.scale) / (1 << headroom)
    a32 = to_int32(ctx.builder, a, common, f"{stem}_a")
    b32 = to_int32(ctx.builder, b, common, f"{stem}_b")
    op = ts.Op.ADD if node.target == aten.add.Tensor else ts.Op.SUB
    acc = ctx.builder.op(op, [a32, b32], shape, ts.DType.INT32, None, stem)
    ctx.finish(node, out, acc, shape, ts.DType.INT32, common)


@register(aten.mul.Tensor, check=check_binary)
def lower_mul(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_binary(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    a, b = ctx.qtensor(node.args[0], node), ctx.qtensor(node.args[1], node)
    out = ctx.output_quant(node)
    a, b, shape = broadcast_operands(ctx, node, a, b)
    stem = ctx.stem(node)
    a32 = to_int32(ctx.builder, a, a.scale, f"{stem}_a")
    b32 = to_int32(ctx.builder, b, b.scale, f"{stem}_b")
    shift = ctx.builder.const(np.zeros(1, np.int8), f"{stem}_shift")
    acc = ctx.builder.op(ts.Op.MUL, [a32, b32, shift], shape, ts.DType.INT32, None, stem)
    ctx.finish(node, out, acc, shape, ts.DType.INT32, a.scale * b.scale)
