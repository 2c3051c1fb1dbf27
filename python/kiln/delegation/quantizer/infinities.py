"""Values that can hold -inf or inf are left float: they have no integer code.

Masks that hide attention scores are written with infinities: ``torch.zeros(...).masked_fill(
padding, float("-inf"))`` (how ``nn.MultiheadAttention`` turns a key-padding mask into an
additive one), ``torch.where(mask, float("-inf"), 0.0)``, a constant causal mask. An observer
on such a tensor measures an infinite range, and the program could not run with the scale it
gives (kiln.passes.quantization_parameters refuses it). Which values can hold an infinity is
known from the graph: :func:`infinite_values` follows them from where they are made (an
infinite fill value or constant) through what keeps them (views, copies, sums, masks) to what
ends them (a softmax, an exponential, a comparison). :func:`leave_infinities_float` then takes
the annotations off those values, after the annotator made them: what reads such a value
computes in float, and its own result is quantized as the annotator decided.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec

from kiln.delegation.quantizer.annotator import ANNOTATION_KEY

aten = torch.ops.aten

# Operators whose float result is finite whatever infinities their inputs hold (attention
# applies its mask before a softmax).
_FINITE_RESULT = {
    aten.softmax.int, aten._softmax.default, aten._safe_softmax.default, aten.exp.default,
    aten.sigmoid.default, aten.tanh.default, aten.hardtanh.default, aten.clamp.default,
    aten.scaled_dot_product_attention.default,
}


def _is_infinite(value: Any) -> bool:
    return isinstance(value, float) and math.isinf(value)


def _constant_holds_infinity(model: GraphModule, node: Node) -> bool:
    value: Any = model
    for part in str(node.target).split("."):
        value = getattr(value, part, None)
    return isinstance(value, torch.Tensor) and value.is_floating_point() and bool(torch.isinf(value).any())


def _is_float(node: Node) -> bool:
    value = node.meta.get("val")
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def infinite_values(model: GraphModule) -> set[Node]:
    """The float nodes of ``model`` whose value can hold -inf or inf (graph order walk)."""
    found: set[Node] = set()
    for node in model.graph.nodes:
        if not _is_float(node):
            continue
        if node.op == "get_attr":
            if _constant_holds_infinity(model, node):
                found.add(node)
        elif node.op == "call_function" and node.target not in _FINITE_RESULT:
            literals = [*node.args, *node.kwargs.values()]
            if any(_is_infinite(a) for a in literals) or any(source in found for source in node.all_input_nodes):
                found.add(node)
    return found


def leave_infinities_float(model: GraphModule) -> GraphModule:
    """Takes the quantization annotations off the values that can hold an infinity: no
    observer measures them, the nodes that read them read float."""
    infinite = infinite_values(model)
    if not infinite:
        return model
    dropped: set[Any] = set()  # nodes (outputs) and (input, user) edges left unquantized
    for node in model.graph.nodes:
        annotation = node.meta.get(ANNOTATION_KEY)
        if annotation is None:
            continue
        if node in infinite and annotation.output_qspec is not None:
            annotation.output_qspec = None
            dropped.add(node)
        for source in [s for s in annotation.input_qspec_map if s in infinite]:
            del annotation.input_qspec_map[source]
            dropped.add((source, node))
    _drop_shares_of(model, dropped)
    return model


def _drop_shares_of(model: GraphModule, dropped: set[Any]) -> None:
    """Takes off the specs that share the quantization of a value left float (until none is
    left: a share of a share goes too)."""
    changed = bool(dropped)
    while changed:
        changed = False
        for node in model.graph.nodes:
            annotation = node.meta.get(ANNOTATION_KEY)
            if annotation is None:
                continue
            if _shares_dropped(annotation.output_qspec, dropped):
                annotation.output_qspec = None
                dropped.add(node)
                changed = True
            for source, spec in list(annotation.input_qspec_map.items()):
                if _shares_dropped(spec, dropped):
                    del annotation.input_qspec_map[source]
                    dropped.add((source, node))
                    changed = True


def _shares_dropped(spec: Any, dropped: set[Any]) -> bool:
    return isinstance(spec, SharedQuantizationSpec) and spec.edge_or_node in dropped
