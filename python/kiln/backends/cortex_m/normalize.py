"""Move dequantizes after, and quantizes before, the ops that only move values: reshapes,
selects, slices, expands, permutes, splits, concatenations and nearest upsampling commute
with both.

An ``as_strided`` that only restrides a row-major tensor is a reshape too: it becomes a
``view`` first (:func:`views_from_as_strided`); any other ``as_strided`` keeps its float
portable kernel (``aten::as_strided_copy.out``) between its dequantize and quantize.

PT2E leaves such ops around without their own quantize and dequantize (``unsqueeze ->
max_pool2d -> squeeze`` of a 1-D pooling, a ``view`` before a linear layer, the
``expand -> view`` before an attention ``bmm``), or between a dequantize and a quantize
of the same qparams (``select`` of a recurrent layer's time step). After this pass they
work on int8 tensors, and the op they wrap is directly between a dequantize and a
quantize. A concatenation moves when all its inputs share one qparams; otherwise the
Cortex-M lowering requantizes its inputs first (:func:`kiln.backends.cortex_m.lowering`).
"""

from __future__ import annotations

import operator

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
from kiln.backends.cortex_m.ops import op
from kiln.passes.as_strided import reshape_objection

aten = torch.ops.aten
RESHAPES = {aten.view.default, aten._unsafe_view.default, aten.unsqueeze.default, aten.squeeze.dims,
            aten.squeeze.dim, aten.squeeze.default}
#: Ops of one tensor that only move or select its values (besides RESHAPES): a dequantize
#: moves past them; permute becomes cortex_m::transpose on the way.
MOVES = {aten.select.int, aten.slice.Tensor, aten.expand.default, aten.permute.default,
         aten.upsample_nearest2d.vec, aten.upsample_nearest2d.default, aten.clone.default, aten.alias.default}
#: Ops that split one tensor into several (each part read through getitem).
SPLITS = {aten.split_with_sizes.default, aten.split.Tensor, aten.unbind.int}


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


def _int8_call(editor: GraphEditor, node: Node, source: Node) -> Node:
    """``node``'s op applied to the int8 ``source`` instead of its dequantized form."""
    if node.target is aten.permute.default:
        rank = len(shape_of(source))
        target, args = op("transpose"), (source, [int(p) % rank for p in node.args[1]])
    else:
        target, args = node.target, (source, *node.args[1:])
    return editor.call(target, args, meta_tensor(shape_of(node), torch.int8), before=node, like=node)


def _sink_dequantize(editor: GraphEditor, node: Node) -> bool:
    found = dequantized(node.args[0])
    if found is None or node.kwargs:
        return False
    source, _ = found
    if node.target is aten.permute.default and editor.constant_value(source) is not None:
        return False  # a weight's transpose, which the linear layer's pattern takes as it is
    dequantize = node.args[0]
    moved = _int8_call(editor, node, source)
    result = editor.call(DEQUANTIZE, (moved, *dequantize.args[1:]), node.meta["val"], before=node, like=dequantize)
    node.replace_all_uses_with(result)
    return True


def _sink_dequantize_through_split(editor: GraphEditor, split: Node) -> bool:
    found = dequantized(split.args[0])
    parts = list(split.users)
    if found is None or split.kwargs or not all(u.target is operator.getitem for u in parts):
        return False
    source, _ = found
    dequantize = split.args[0]
    vals = split.meta["val"]
    moved = editor.call(split.target, (source, *split.args[1:]), [meta_tensor(v.shape, torch.int8) for v in vals],
                        before=split, like=split)
    for part in parts:
        index = part.args[1]
        item = editor.call(operator.getitem, (moved, index), meta_tensor(vals[index].shape, torch.int8), before=split)
        result = editor.call(DEQUANTIZE, (item, *dequantize.args[1:]), part.meta["val"], before=split, like=dequantize)
        part.replace_all_uses_with(result)
    return True


def _sink_dequantize_through_cat(editor: GraphEditor, cat: Node) -> bool:
    tensors = cat.args[0]
    found = [dequantized(t) for t in tensors]
    if not found or any(f is None for f in found) or len({f[1] for f in found}) != 1:  # type: ignore[index]
        return False
    sources = [f[0] for f in found]  # type: ignore[index]
    moved = editor.call(cat.target, (sources, *cat.args[1:]), meta_tensor(shape_of(cat), torch.int8), before=cat,
                        like=cat)
    result = editor.call(DEQUANTIZE, (moved, *tensors[0].args[1:]), cat.meta["val"], before=cat, like=tensors[0])
    cat.replace_all_uses_with(result)
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


def _move(editor: GraphEditor, node: Node) -> bool:
    if node.target in RESHAPES:
        return _sink_dequantize(editor, node) or _hoist_quantize(editor, node)
    if node.target in MOVES:
        return _sink_dequantize(editor, node)
    if node.target in SPLITS:
        return _sink_dequantize_through_split(editor, node)
    if node.target is aten.cat.default:
        return _sink_dequantize_through_cat(editor, node)
    return False


def move_quantization_across_reshapes(editor: GraphEditor) -> None:
    changed = True
    while changed:
        changed = False
        for node in list(editor.graph.nodes):
            if node.op == "call_function" and node.users:
                changed |= _move(editor, node)
        editor.graph.eliminate_dead_code()


def fold_quantized_constants(editor: GraphEditor) -> None:
    """``quantize(full(...))``, a constant the model builds (a recurrent layer's zero
    initial state), becomes the int8 constant it always is."""
    for node in list(editor.graph.nodes):
        qparams = quantize_qparams(node)
        source = node.args[0] if qparams is not None else None
        if not isinstance(source, Node) or source.op != "call_function" or source.target is not aten.full.default:
            continue
        if any(isinstance(a, Node) for a in (*source.args, *source.kwargs.values())):
            continue
        value = source.target(*source.args, **{k: v for k, v in source.kwargs.items() if k != "device"})
        q = torch.ops.quantized_decomposed.quantize_per_tensor(value.to(torch.float32), qparams.scale,
                                                               qparams.zero_point, qparams.qmin, qparams.qmax,
                                                               torch.int8)
        node.replace_all_uses_with(editor.constant("full", q))
    editor.graph.eliminate_dead_code()
