"""cat -> CONCAT, after RESCALEs of inputs whose quantization differs from the output's."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.builder import attribute
from kiln.backends.arm.tosa.context import LoweringContext, find_output_quant, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.values import QTensor, canonical_perm

aten = torch.ops.aten


def check_cat(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    rank = len(node.meta["val"].shape)
    if rank > 4:
        return f"concatenation of rank-{rank} tensors is not lowered"
    return None


@register(aten.cat.default, aten.concat.default, check=check_cat)
def lower_cat(ctx: LoweringContext, node: torch.fx.Node) -> None:
    inputs = [ctx.qtensor(arg, node) for arg in node.args[0]]
    rank = len(ctx.shape_of(node))
    dim = int(scalar_arg(node, 1, "dim", 0)) % rank
    stem = ctx.stem(node)
    out, _ = find_output_quant(node)
    if out is not None:  # quantized (after views: a stack is cat + view)
        scale, zero_point, dtype = out.scale, out.zero_point, out.dtype
    else:
        first = inputs[0]
        if not all(v.same_quantization(first.scale, first.zero_point, first.dtype) for v in inputs):
            raise ctx.fail(node, "inputs have different quantization and no output quantize node follows")
        out, scale, zero_point, dtype = None, first.scale, first.zero_point, first.dtype
    parts = [ctx.requantize(v, scale, zero_point, dtype, f"{stem}_in{i}").name for i, v in enumerate(inputs)]
    result = QTensor("", ctx.shape_of(node), dtype, scale, zero_point)
    axis = canonical_perm(rank).index(dim)
    name = ctx.builder.op(ts.Op.CONCAT, parts, result.tosa_shape, dtype, attribute("Concat", axis), stem)
    if out is None:
        ctx.bind(node, result.renamed(name))
    else:
        ctx.finish(node, out, name, result.tosa_shape, dtype, scale, zero_point)
