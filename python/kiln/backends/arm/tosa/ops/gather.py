"""embedding / index_select -> GATHER (Ethos-U85; Vela has no GATHER for U55/U65).

TOSA's GATHER reads ``values[n, indices[n, w], :]`` from a [N, K, C] table with [N, W] int32
indices. An embedding ``weight[ids]`` is that with N = 1, K the vocabulary, C the
embedding size and W all the ids in order; ``index_select(x, 0, index)`` of a matrix too.
The result holds table values: it keeps the table's quantization. The indices cross the
delegate boundary as int32 (the program's own int32 input, or a constant).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.constraints import operator_objection
from kiln.backends.arm.tosa.context import LoweringContext
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.reshape import relayout
from kiln.backends.arm.tosa.values import ConstTensor, QTensor
from kiln.passes.delegation import operator_name

aten = torch.ops.aten


def _table_and_positions(node: torch.fx.Node) -> tuple[Any, Any]:
    if node.target == aten.embedding.default:
        return node.args[0], node.args[1]
    return node.args[0], node.args[2]


def check_gather(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    reason = operator_objection(operator_name(node), compile_spec)
    if reason is not None:
        return reason
    table, positions = _table_and_positions(node)
    if len(table.meta["val"].shape) != 2:
        return "only gathers from a matrix (an embedding table) are lowered"
    if node.target == aten.index_select.default and int(node.args[1]) % 2 != 0:
        return "index_select is lowered along dim 0 only"
    if node.target == aten.embedding.default and len(node.args) > 2 and node.args[2] not in (-1, None):
        return "embedding with padding_idx is lowered only for inference (it has no effect there)"
    return None


def _positions(ctx: LoweringContext, node: torch.fx.Node, arg: Any) -> QTensor:
    value = ctx.value(arg, node)
    if isinstance(value, ConstTensor):
        data = np.asarray(value.data).astype(np.int32)
        name = ctx.builder.const(data, f"{ctx.stem(node)}_positions")
        return QTensor(name, tuple(data.shape), ts.DType.INT32, 1.0, 0)
    if value.dtype != ts.DType.INT32:
        raise ctx.fail(node, "gather positions must be int32")
    return value


@register(aten.embedding.default, aten.index_select.default, check=check_gather)
def lower_gather(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_gather(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    table_arg, positions_arg = _table_and_positions(node)
    table = ctx.qtensor(table_arg, node)
    positions = _positions(ctx, node, positions_arg)
    stem = ctx.stem(node)
    rows, width = table.shape
    count = math.prod(positions.shape)
    values = ctx.reshape(table.name, (1, rows, width), table.dtype, f"{stem}_table")
    flat = ctx.reshape(positions.name, (1, count), ts.DType.INT32, f"{stem}_positions_flat")
    gathered = ctx.builder.op(ts.Op.GATHER, [values, flat], (1, count, width), table.dtype, None, stem)
    result = QTensor(gathered, (1, count, width), table.dtype, table.scale, table.zero_point)
    ctx.bind(node, relayout(ctx, result, ctx.shape_of(node), f"{stem}_shape"))
