"""Move dequantizes after, and quantizes before, reshapes: reshaping commutes with both.

An ``as_strided`` that only restrides a row-major tensor is a reshape too: it becomes a
``view`` first (:func:`views_from_as_strided`); any other ``as_strided`` keeps its float
portable kernel (``aten::as_strided_copy.out``) between its dequantize and quantize.

PT2E leaves reshapes that share their input's qparams (``unsqueeze -> max_pool2d ->
squeeze`` of a 1-D pooling, a ``view`` before a linear layer) without their own quantize
and dequantize, so the op they wrap is not directly between a dequantize and a quantize.
After this pass it is, and the reshapes work on int8 tensors.
"""

from __future__ import annotations

import torch
from torch.fx import Node

from kiln.backends.cortex_m.graph_edit import (
    DEQUANTIZE,
    QUANTIZE,
    GraphEditor,
    dequantized,
    meta_tensor,
    only_user,
    quantize_qparams,
    shape_of,
)
from kiln.passes.as_strided import reshape_objection

aten = torch.ops.aten
RESHAPES = {aten.view.default, aten._unsafe_view.default, aten.unsqueeze.default, aten.squeeze.dims,
            aten.squeeze.dim, aten.squeeze.default}


def views_from_as_strided(editor: GraphEditor) -> None:
    """Each ``as_strided`` that is a reshape of its input becomes a ``view`` to its size."""
    for node in list(editor.graph.nodes):
        if node.op != "call_function" or node.target is not aten.as_strided.default:
            continue
        if reshape_objection(node) is not None:
            continue
        view = editor.call(aten.view.default, (node.args[0], list(node.args[1])), node.meta["val"], before=node,
                           like=node)
        node.replace_all_uses_with(view)
        editor.graph.erase_node(node)


def _sink_dequantize(editor: GraphEditor, reshape: Node) -> bool:
    found = dequantized(reshape.args[0])
    if found is None:
        return False
    source, _ = found
    dequantize = reshape.args[0]
    moved = editor.call(reshape.target, (source, *reshape.args[1:]), meta_tensor(shape_of(reshape), torch.int8),
                        before=reshape, like=reshape)
    result = editor.call(DEQUANTIZE, (moved, *dequantize.args[1:]), reshape.meta["val"], before=reshape,
                         like=dequantize)
    reshape.replace_all_uses_with(result)
    return True


def _hoist_quantize(editor: GraphEditor, reshape: Node) -> bool:
    quantize = only_user(reshape)
    if quantize is None or quantize_qparams(quantize) is None or not isinstance(reshape.args[0], Node):
        return False
    value = reshape.args[0]
    moved = editor.call(QUANTIZE, (value, *quantize.args[1:]), meta_tensor(shape_of(value), torch.int8),
                        before=quantize, like=quantize)
    result = editor.call(reshape.target, (moved, *reshape.args[1:]), quantize.meta["val"], before=quantize,
                         like=reshape)
    quantize.replace_all_uses_with(result)
    return True


def move_quantization_across_reshapes(editor: GraphEditor) -> None:
    changed = True
    while changed:
        changed = False
        for node in list(editor.graph.nodes):
            if node.op == "call_function" and node.target in RESHAPES and node.users:
                changed |= _sink_dequantize(editor, node) or _hoist_quantize(editor, node)
        editor.graph.eliminate_dead_code()
