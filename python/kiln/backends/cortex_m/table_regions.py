"""Elementwise float code between one dequantize and one quantize as a 256-entry table
(a requantization, a dequantize straight into a quantize of other qparams, included).

Core ATen spells many activations as several elementwise ops (hardswish is
``x * clamp(x + 3, 0, 6) / 6``): whatever runs between an int8 dequantize and the next
quantize, elementwise and reading nothing but that one tensor and numbers, maps each of
the 256 int8 inputs to one int8 output. The table is made by running those very ops on
the 256 dequantized values and quantizing as PyTorch does, so the lookup
(``cortex_m::quantized_activation``) gives the quantized model's integers exactly.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from torch.fx import Node

from kiln.backends.cortex_m.graph_edit import GraphEditor, QParams, dequantized, meta_tensor, quantize_qparams, shape_of
from kiln.backends.cortex_m.ops import op

aten = torch.ops.aten

ELEMENTWISE = {
    aten.add.Tensor, aten.add.Scalar, aten.sub.Tensor, aten.sub.Scalar, aten.mul.Tensor, aten.mul.Scalar,
    aten.div.Tensor, aten.div.Scalar, aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default,
    aten.relu.default, aten.hardtanh.default, aten.sigmoid.default, aten.tanh.default, aten.exp.default,
    aten.log.default, aten.neg.default, aten.abs.default, aten.sqrt.default, aten.rsqrt.default,
    aten.reciprocal.default, aten.erf.default, aten.gelu.default, aten.silu.default, aten.hardswish.default,
    aten.hardsigmoid.default, aten.elu.default, aten.leaky_relu.default, aten.pow.Tensor_Scalar,
    aten.minimum.default, aten.maximum.default, aten.softplus.default,
}


def _operands(node: Node) -> list[Any]:
    return [*node.args, *node.kwargs.values()]


def _region(quantize: Node) -> Optional[tuple[Node, list[Node]]]:
    """The dequantize and the elementwise nodes that compute ``quantize``'s input."""
    source: Optional[Node] = None
    region: set[Node] = set()
    pending = [quantize.args[0]]
    while pending:
        node = pending.pop()
        if not isinstance(node, Node) or node in region or node is source:
            continue
        if dequantized(node) is not None:
            if source is not None:
                return None  # two int8 inputs: not a function of one byte
            source = node
            continue
        if node.op != "call_function" or node.target not in ELEMENTWISE:
            return None
        region.add(node)
        pending.extend(a for a in _operands(node) if isinstance(a, Node))
    if source is None or not region:
        return None
    shape = shape_of(source)
    for node in region:
        if shape_of(node) != shape or any(u not in region and u is not quantize for u in node.users):
            return None
    ordered = [n for n in quantize.graph.nodes if n in region]
    return source, ordered


def requantized(editor: GraphEditor, source: Node, have: QParams, want: QParams, before: Node) -> Node:
    """``source`` (int8 with ``have``) in ``want``'s qparams: itself, or through the table of
    PyTorch's dequantize and quantize of each value (exact)."""
    if have == want:
        return source
    levels = torch.arange(-128, 128, dtype=torch.int8)
    real = torch.ops.quantized_decomposed.dequantize_per_tensor(levels, have.scale, have.zero_point, have.qmin,
                                                                have.qmax, torch.int8)
    lut = torch.ops.quantized_decomposed.quantize_per_tensor(real, want.scale, want.zero_point, want.qmin, want.qmax,
                                                             torch.int8)
    return editor.call(op("quantized_activation"), (source, editor.constant("lut", lut)),
                       meta_tensor(shape_of(source), torch.int8), before=before)


def lower_requantize(editor: GraphEditor, quantize: Node) -> bool:
    """A quantize of a dequantize: nothing when their qparams match, else a requantization."""
    found = dequantized(quantize.args[0])
    qparams = quantize_qparams(quantize)
    if found is None or qparams is None:
        return False
    source, in_q = found
    quantize.replace_all_uses_with(requantized(editor, source, in_q, qparams, quantize))
    return True


def lower_table_region(editor: GraphEditor, quantize: Node) -> bool:
    if lower_requantize(editor, quantize):
        return True
    qparams = quantize_qparams(quantize)
    found = _region(quantize) if qparams is not None else None
    if found is None:
        return False
    dequantize, region = found
    int8_source, in_q = dequantized(dequantize)  # type: ignore[misc]
    levels = torch.arange(-128, 128, dtype=torch.int8)
    values: dict[Node, Any] = {dequantize: torch.ops.quantized_decomposed.dequantize_per_tensor(
        levels, in_q.scale, in_q.zero_point, in_q.qmin, in_q.qmax, torch.int8)}

    def value(a: Any) -> Any:
        return values[a] if isinstance(a, Node) else a

    for node in region:
        values[node] = node.target(*[value(a) for a in node.args],
                                   **{k: value(v) for k, v in node.kwargs.items()})
    q = qparams
    lut = torch.ops.quantized_decomposed.quantize_per_tensor(values[region[-1]].to(torch.float32), q.scale,
                                                             q.zero_point, q.qmin, q.qmax, torch.int8)
    if quantize.args[0] is not region[-1]:
        return False
    result = editor.call(op("quantized_activation"), (int8_source, editor.constant("lut", lut)),
                         meta_tensor(shape_of(dequantize), torch.int8), before=quantize, like=region[-1])
    quantize.replace_all_uses_with(result)
    return True
