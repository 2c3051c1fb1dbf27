"""``nn.GLU`` written out before annotation: ``first half * sigmoid(second half)``.

``torch.export`` keeps ``aten.glu`` whole; the quantizer has no rule for it, and core ATen
later decomposes it into two slices, a sigmoid and a product in float between one
dequantize and one quantize, which no integer backend can take (the sigmoid's result is
used unquantized). Written out as its pieces before annotation, each is quantized by its
own rule: the halves share the input's quantization, the sigmoid has its fixed [0, 1]
range (a TABLE), the product its observed one (a MUL).
"""

from __future__ import annotations

import logging
from typing import Any

import torch
from torch.fx import GraphModule, Node

logger = logging.getLogger(__name__)

aten = torch.ops.aten


def _call(graph: torch.fx.Graph, like: Node, target: Any, *args: Any) -> Node:
    """``target(*args)`` before ``like``, with its fake value and ``like``'s module scope."""
    node = graph.call_function(target, args)
    fake_args = [a.meta["val"] if isinstance(a, Node) else a for a in args]
    fake = next(a for a in fake_args if isinstance(a, torch.Tensor))
    with fake.fake_mode:
        node.meta["val"] = target(*fake_args)
    for key in ("nn_module_stack", "stack_trace", "source_fn_stack"):
        if key in like.meta:
            node.meta[key] = like.meta[key]
    return node


def write_out_glu(model: GraphModule) -> GraphModule:
    """Replaces every ``aten.glu`` of ``model`` by slices, a sigmoid and a product."""
    graph = model.graph
    written = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target != aten.glu.default:
            continue
        source = node.args[0]
        dim = int(node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1))
        half = int(source.meta["val"].shape[dim]) // 2
        with graph.inserting_before(node):
            first = _call(graph, node, aten.slice.Tensor, source, dim, 0, half)
            second = _call(graph, node, aten.slice.Tensor, source, dim, half, 2 * half)
            gated = _call(graph, node, aten.mul.Tensor, first, _call(graph, node, aten.sigmoid.default, second))
        node.replace_all_uses_with(gated)
        graph.erase_node(node)
        written += 1
    if written:
        model.recompile()
        logger.info("wrote out %d GLU operator(s) as slices, a sigmoid and a product", written)
    return model
