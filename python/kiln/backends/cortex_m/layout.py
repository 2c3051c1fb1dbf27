"""Cancel the layout transposes the Cortex-M lowering puts around each NHWC kernel.

Each convolution or pool reads and writes NHWC tensors between two ``cortex_m::transpose``
calls (NCHW -> NHWC before, NHWC -> NCHW after). Between two such layers the pair
"to NCHW, then back to NHWC" does nothing and is removed; elementwise int8 kernels (add,
mul, table lookups) between them run on the NHWC tensors instead, so that a residual
block or an activation does not break the chain.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch.fx import Node

from kiln.backends.cortex_m.graph_edit import GraphEditor, meta_tensor, shape_of
from kiln.backends.cortex_m.ops import op

aten = torch.ops.aten

# Elementwise kernels: operator -> positions of their tensor arguments of the output's shape.
ELEMENTWISE: dict[str, tuple[int, ...]] = {"quantized_add": (0, 4), "quantized_mul": (0, 2),
                                           "quantized_activation": (0,)}


def _perm(node: object) -> Optional[list[int]]:
    if isinstance(node, Node) and node.op == "call_function" and node.target is op("transpose"):
        return list(node.args[1])
    return None


def _cancel_pairs(editor: GraphEditor) -> bool:
    changed = False
    for node in list(editor.graph.nodes):
        outer, inner = _perm(node), _perm(node.args[0]) if node.op == "call_function" and node.args else None
        if outer is None or inner is None or len(outer) != len(inner):
            continue
        if [inner[p] for p in outer] == list(range(len(outer))):
            node.replace_all_uses_with(node.args[0].args[0])
            changed = True
    return changed


def _sink_through_elementwise(editor: GraphEditor) -> bool:
    """``f(t(a), t(b))`` -> ``t(f(a, b))`` for an elementwise ``f`` and one transpose ``t``."""
    changed = False
    for node in list(editor.graph.nodes):
        name = next((n for n in ELEMENTWISE if node.op == "call_function" and node.target is op(n)), None)
        if name is None or not node.users:
            continue
        sources = [node.args[i] for i in ELEMENTWISE[name]]
        perms = [_perm(s) for s in sources]
        if perms[0] is None or any(p != perms[0] for p in perms) or \
                len({shape_of(s) for s in sources}) != 1:  # type: ignore[arg-type]
            continue
        args = list(node.args)
        for i, source in zip(ELEMENTWISE[name], sources):
            args[i] = source.args[0]  # type: ignore[union-attr]
        inner = editor.call(node.target, tuple(args), meta_tensor(shape_of(args[ELEMENTWISE[name][0]]),
                                                                   node.meta["val"].dtype), before=node, like=node)
        outer = editor.call(op("transpose"), (inner, perms[0]), node.meta["val"], before=node)
        node.replace_all_uses_with(outer)
        changed = True
    return changed


_RESHAPES = {aten.view.default, aten.unsqueeze.default, aten.squeeze.dims, aten.squeeze.dim}


def _cancel_reshapes(editor: GraphEditor) -> bool:
    """A reshape of a reshape back to the first one's input shape is that input (the
    views around 1-D layers computed as 2-D ones)."""
    changed = False
    for node in list(editor.graph.nodes):
        if node.op != "call_function" or node.target not in _RESHAPES or not node.users:
            continue
        inner = node.args[0]
        if isinstance(inner, Node) and inner.op == "call_function" and inner.target in _RESHAPES and \
                shape_of(inner.args[0]) == shape_of(node):
            node.replace_all_uses_with(inner.args[0])
            changed = True
    return changed


def cancel_layout_transposes(editor: GraphEditor) -> None:
    while _sink_through_elementwise(editor) | _cancel_pairs(editor) | _cancel_reshapes(editor):
        editor.graph.eliminate_dead_code()
