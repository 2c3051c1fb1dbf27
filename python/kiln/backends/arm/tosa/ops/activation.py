"""Activations.

* relu / relu6 / hardtanh / clamp: CLAMP in the integer domain (after a RESCALE if
  the output quantization differs). Quantization is monotone, so
  ``quantize(clamp(x, lo, hi)) == clamp(quantize(x), q(lo), q(hi))`` exactly. After a
  convolution they never get here: the convolution folds them (context.output_quant).
* sigmoid / tanh / hardswish / hardsigmoid / silu / gelu, and any pointwise float
  region that depends on one int8 tensor (x + 3, x * clamp(x + 3, 0, 6) / 6 ...):
  TABLE with 256 int8 entries, one per input code, computed by running the region's
  own PyTorch operators and quantize node on the 256 dequantized codes - the table is
  the fake-quantized model's own arithmetic, so the lowering is bit-exact. A function of
  one int16 tensor becomes TOSA's interpolated 513-entry int16 TABLE (table16.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Collection
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.context import LoweringContext, is_quantize, qd
from kiln.backends.arm.tosa.ops import REGISTRY, register
from kiln.backends.arm.tosa.ops.table16 import lower_table16
from kiln.backends.arm.tosa.values import QTensor
from kiln.passes.activations import activation_range

aten = torch.ops.aten

# A region bigger than this is not an activation function (keeps the search cheap).
_MAX_REGION = 16

TABLE_TARGETS = (
    aten.sigmoid.default, aten.tanh.default, aten.hardswish.default, aten.hardsigmoid.default,
    aten.silu.default, aten.gelu.default, aten.elu.default, aten.leaky_relu.default,
)


@register(aten.relu.default, aten.relu_.default, aten.hardtanh.default, aten.hardtanh_.default,
          aten.clamp.default)
def lower_clamp(ctx: LoweringContext, node: torch.fx.Node) -> None:
    x = ctx.qtensor(node.args[0], node)
    out = ctx.output_quant(node)
    low, high = activation_range(node)  # type: ignore[misc]
    out.low = low if out.low is None else (out.low if low is None else max(out.low, low))
    out.high = high if out.high is None else (out.high if high is None else min(out.high, high))
    ctx.finish(node, out, x.name, x.tosa_shape, x.dtype, x.scale, x.zero_point)


def tensor_args(node: torch.fx.Node) -> list[torch.fx.Node]:
    found: list[torch.fx.Node] = []
    torch.fx.map_arg((node.args, node.kwargs), lambda a: found.append(a) or a)
    return found


def is_pointwise(node: torch.fx.Node) -> bool:
    """Elementwise ATen op (PyTorch's pointwise tag; aten.hardswish lacks the tag)."""
    return node.op == "call_function" and (
        node.target in TABLE_TARGETS or torch.Tag.pointwise in getattr(node.target, "tags", ()))


@dataclass
class UnaryRegion:
    """Pointwise float nodes that depend on one quantized tensor only, up to one quantize."""

    source: torch.fx.Node
    nodes: list[torch.fx.Node]  # graph order
    quantize: torch.fx.Node


def value_key(node: torch.fx.Node) -> Any:
    """Copies of one dequantize (the partitioner gives each user its own) are one value."""
    if node.op == "call_function" and node.target == qd().dequantize_per_tensor.default:
        return ("dequantize", *node.args, *sorted(node.kwargs.items()))
    return node


def unary_region(node: torch.fx.Node) -> UnaryRegion | None:
    """The region starting at ``node`` if it can become one TABLE, else None."""
    sources = {value_key(a): a for a in tensor_args(node)}
    if len(sources) != 1 or not is_pointwise(node):
        return None
    key, source = next(iter(sources.items()))
    region: set[torch.fx.Node] = set()
    quantizes: set[torch.fx.Node] = set()
    frontier = [node]
    while frontier:
        current = frontier.pop()
        if current in region or current in quantizes:
            continue
        if is_quantize(current):
            quantizes.add(current)
            continue
        if not is_pointwise(current) or len(region) >= _MAX_REGION:
            return None
        region.add(current)
        frontier.extend(current.users)
    if len(quantizes) != 1:
        return None
    if any(arg not in region and value_key(arg) != key for n in region for arg in tensor_args(n)):
        return None
    order = [n for n in node.graph.nodes if n in region]
    return UnaryRegion(source, order, quantizes.pop())


def enclosing_region(node: torch.fx.Node) -> UnaryRegion | None:
    """The largest TABLE region ``node`` belongs to (it may start a few nodes earlier)."""
    nodes = list(node.graph.nodes)
    index = nodes.index(node)
    for start in nodes[max(0, index - _MAX_REGION):index + 1]:
        region = unary_region(start)
        if region is not None and node in region.nodes:
            return region
    return None


def table_values(region: UnaryRegion, x: QTensor) -> np.ndarray:
    """The region's int8 result for each of the 256 input codes, computed by the
    region's own PyTorch operators and its quantize node (so it is bit-exact)."""
    codes = torch.arange(-128, 128, dtype=torch.int32).to(torch.int8)
    source = qd().dequantize_per_tensor.default(codes, x.scale, x.zero_point, -128, 127, torch.int8)
    env: dict[torch.fx.Node, Any] = {}
    for node in region.nodes:
        # Every argument from outside the region is the source (or a copy of its dequantize).
        args, kwargs = torch.fx.map_arg((node.args, node.kwargs), lambda a: env.get(a, source))
        env[node] = node.target(*args, **kwargs)
    q = region.quantize
    return q.target(env[q.args[0]], *q.args[1:], **q.kwargs).numpy().astype(np.int8)


def table_region(node: torch.fx.Node, compile_spec: Any) -> UnaryRegion | None:
    """The region the lowering turns into one TABLE when it meets ``node`` first: a
    pointwise function of one tensor, unless it is a single operator with its own
    lowering (relu, clamp: CLAMP)."""
    region = unary_region(node)
    if region is None:
        return None
    entry = REGISTRY.get(node.target)
    if len(region.nodes) == 1 and entry is not None and entry.name != "lower_table":
        if entry.check(node, compile_spec, ()) is None:
            return None
    return region


def check_table(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if len({value_key(a) for a in tensor_args(node)}) != 1:
        return "not a function of one tensor (cannot be a TABLE)"
    return None


@register(*TABLE_TARGETS, check=check_table)
def lower_table(ctx: LoweringContext, node: torch.fx.Node) -> None:
    """A pointwise function of one int8 tensor -> TABLE (hardswish arrives decomposed as
    x * clamp(x + 3, 0, 6) / 6: the whole region becomes one table)."""
    region = unary_region(node)
    if region is None:
        raise ctx.fail(node, "not a function of one int8 tensor ending in a quantize node")
    x = ctx.qtensor(region.source, node)
    if x.dtype == ts.DType.INT16:
        lower_table16(ctx, node, region, x)
        return
    if x.dtype != ts.DType.INT8:
        raise ctx.fail(node, "table activations are lowered for int8 and int16 inputs only")
    out = region.quantize
    if out.args[5] != torch.int8:
        raise ctx.fail(node, f"table activations write int8 only; the result is quantized to {out.args[5]}")
    stem = ctx.stem(node)
    table = ctx.builder.const(table_values(region, x), f"{stem}_table")
    result = ctx.builder.op(ts.Op.TABLE, [x.name, table], x.tosa_shape, ts.DType.INT8, None, stem)
    scale, zero_point = float(out.args[1]), int(out.args[2])
    ctx.consumed.update(region.nodes)
    ctx.consumed.add(out)
    ctx.bind(out, QTensor(result, x.shape, ts.DType.INT8, scale, zero_point))
