"""constant_pad_nd -> PAD with the quantized pad value (the zero point for 0.0)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.context import LoweringContext, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.values import QTensor, canonical_perm

aten = torch.ops.aten

_NUMPY = {ts.DType.INT8: np.int8, ts.DType.INT16: np.int16}


def emit_pad(ctx: LoweringContext, x: QTensor, logical_pads: Sequence[tuple[int, int]], value: int,
             stem: str) -> QTensor:
    """PAD ``x`` by (before, after) per *logical* dim with the integer ``value``."""
    perm = canonical_perm(x.rank)
    flat = [amount for axis in perm for amount in logical_pads[axis]]
    padding = ctx.builder.shape_const(flat, f"{stem}_padding")
    pad_const = ctx.builder.const(np.array([value], _NUMPY[x.dtype]), f"{stem}_value")
    shape = tuple(size + before + after for size, (before, after) in zip(x.shape, logical_pads))
    result = QTensor("", shape, x.dtype, x.scale, x.zero_point)
    name = ctx.builder.op(ts.Op.PAD, [x.name, padding, pad_const], result.tosa_shape, x.dtype, None, stem)
    return result.renamed(name)


def check_pad(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    pads = list(node.args[1])
    if any(p < 0 for p in pads):
        return "negative padding (cropping) is not lowered"
    rank = len(node.args[0].meta["val"].shape)
    if rank > 4:
        return f"padding a rank-{rank} tensor is not lowered"
    return None


@register(aten.constant_pad_nd.default, check=check_pad)
def lower_constant_pad(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_pad(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    x = ctx.qtensor(node.args[0], node)
    flat = [int(p) for p in node.args[1]]
    logical = [(0, 0)] * x.rank
    for i in range(len(flat) // 2):  # PyTorch lists the last dim first
        logical[x.rank - 1 - i] = (flat[2 * i], flat[2 * i + 1])
    value = float(scalar_arg(node, 2, "value", 0.0))
    limits = {ts.DType.INT8: (-128, 127), ts.DType.INT16: (-32768, 32767)}[x.dtype]
    q_value = int(np.clip(np.round(np.float32(value) / np.float32(x.scale)) + x.zero_point, *limits))
    ctx.bind(node, emit_pad(ctx, x, logical, q_value, ctx.stem(node)))
