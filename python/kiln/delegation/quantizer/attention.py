"""Attention written out in operators the quantizer annotates, before annotation.

``torch.export`` keeps ``F.scaled_dot_product_attention`` as one node; left whole, nothing
inside it is quantized and core ATen later decomposes it into a float island (two matrix
products, a softmax, a guard for masked rows) that no integer backend can take. Written
out as PyTorch defines it -

    scores = (q @ k.transpose(-2, -1)) * scale    (+ mask)
    result = _safe_softmax(scores, -1) @ v

- every piece is quantized where it should be: the products' and the scale's outputs,
the softmax's fixed [0, 1] range. The arithmetic is the operator's own, so the float
graph computes what it computes (``_safe_softmax`` keeps its answer for fully masked
rows; :mod:`kiln.passes.safe_softmax` drops that guard where the quantized graph proves
it changes nothing).

Masks. A boolean mask (and ``is_causal``'s lower triangle) becomes what it means: 0 where
a score is kept and -inf where it is hidden, added to the scores. A mask that hides
scores must not be quantized (-inf has no integer code): the add that applies it is
tagged (:data:`MASKS_SOFTMAX`) and quantized together with its softmax, which then
sees every kept score exactly and no hidden one. The same holds for masks models write
themselves (``scores.masked_fill(mask == 0, float("-inf"))`` before a softmax): a
constant condition becomes a constant added mask as well; a mask that depends on the
inputs stays a ``masked_fill`` (it runs on the CPU, in float).

``unbind`` (how models split a stacked q/k/v) becomes one ``select`` per part: those
share their input's quantization, where the parts of an unbind would get their own.

Attention with dropout (training) or grouped-query heads of unequal count stays whole.
"""

from __future__ import annotations

import logging
import math
import operator
from typing import Any

import torch
from torch.fx import GraphModule, Node

from kiln.delegation.quantizer.emit import Emitter
from kiln.passes.constant_values import ConstantEvaluator

logger = logging.getLogger(__name__)

aten = torch.ops.aten

#: ``node.meta`` key of an add or masked_fill that hides scores from the softmax it feeds; its
#: value is the position of the scores among the node's arguments.
MASKS_SOFTMAX = "kiln_masks_softmax"

SOFTMAX_OPS = (aten.softmax.int, aten._softmax.default, aten._safe_softmax.default)


def _argument(node: Node, index: int, name: str, default: Any) -> Any:
    return node.args[index] if index < len(node.args) else node.kwargs.get(name, default)


def _shape(node: Node) -> tuple[int, ...]:
    return tuple(int(d) for d in node.meta["val"].shape)


def _attribute(model: GraphModule, path: str) -> Any:
    value: Any = model
    for part in path.split("."):
        value = getattr(value, part)
    return value


def _evaluator(model: GraphModule) -> ConstantEvaluator:
    def leaf(node: Node) -> torch.Tensor | None:
        value = _attribute(model, str(node.target)) if node.op == "get_attr" else None
        return value.detach() if isinstance(value, torch.Tensor) else None

    return ConstantEvaluator(leaf)


def additive_mask(keep: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """0 where ``keep`` is True, -inf where it is False."""
    return torch.zeros(keep.shape, dtype=dtype).masked_fill(~keep, -math.inf)


def _hide(emit: Emitter, model: GraphModule, scores: Node, mask: Node | None, causal: bool,
          constants: ConstantEvaluator) -> Node:
    """``scores`` with SDPA's mask applied: added (constant or float masks) or filled in."""
    dtype = scores.meta["val"].dtype
    length, source_length = _shape(scores)[-2:]
    if causal:
        keep = torch.ones(length, source_length, dtype=torch.bool).tril()
        return emit(aten.add.Tensor, scores, emit.constant(model, "causal_mask", additive_mask(keep, dtype)))
    if mask is None:
        return scores
    if mask.meta["val"].dtype != torch.bool:
        return emit(aten.add.Tensor, scores, mask)
    keep = constants.value(mask)
    if keep is not None:
        return emit(aten.add.Tensor, scores, emit.constant(model, "attention_mask", additive_mask(keep, dtype)))
    return emit(aten.masked_fill.Scalar, scores, emit(aten.logical_not.default, mask), -math.inf)


def _write_out(model: GraphModule, node: Node, constants: ConstantEvaluator) -> bool:
    q, k, v = node.args[:3]
    mask = _argument(node, 3, "attn_mask", None)
    dropout = float(_argument(node, 4, "dropout_p", 0.0))
    causal = bool(_argument(node, 5, "is_causal", False))
    scale = node.kwargs.get("scale")
    if dropout != 0.0:
        logger.info("%s: attention with dropout %g left as one operator", node.name, dropout)
        return False
    if node.kwargs.get("enable_gqa", False) and _shape(q)[-3] != _shape(k)[-3]:
        logger.info("%s: grouped-query attention left as one operator", node.name)
        return False
    scale = 1.0 / math.sqrt(_shape(q)[-1]) if scale is None else float(scale)
    emit = Emitter(model.graph, node)
    scores = emit(aten.matmul.default, q, emit(aten.transpose.int, k, -2, -1))
    scores = _hide(emit, model, emit(aten.mul.Tensor, scores, scale), mask, causal, constants)
    result = emit(aten.matmul.default, emit(aten._safe_softmax.default, scores, -1), v)
    if not node.meta["val"].is_contiguous():
        _views_to_reshapes(node)
    node.replace_all_uses_with(result)
    model.graph.erase_node(node)
    return True


# Operators that only rearrange their first argument's elements (views in eager PyTorch).
_VIEW_OPS = (aten.transpose.int, aten.permute.default, aten.view.default, aten.reshape.default,
             aten.select.int, aten.slice.Tensor, aten.unsqueeze.default, aten.squeeze.dim,
             aten.flatten.using_ints)


def _views_to_reshapes(attention: Node) -> None:
    """PyTorch's fused attention returns its result with the heads axis inside the tokens
    axis in memory, so ``y.transpose(1, 2).contiguous().view(...)`` (nanoGPT) exports
    without the ``contiguous`` (it copied nothing) and a ``view`` of the transposed
    result. The written-out result is a contiguous matrix product, which that view cannot
    reinterpret: views downstream of it become reshapes (the same values; a reshape copies
    where a view cannot)."""
    pending = [attention]
    while pending:
        node = pending.pop()
        for user in node.users:
            if user.op == "call_function" and user.target in _VIEW_OPS and user.args[0] is node:
                if user.target == aten.view.default:
                    user.target = aten.reshape.default
                pending.append(user)


def _unbind_to_selects(graph: torch.fx.Graph, node: Node) -> None:
    dim = int(_argument(node, 1, "dim", 0))
    emit = Emitter(graph, node)
    for user in list(node.users):
        if user.op == "call_function" and user.target is operator.getitem:
            user.replace_all_uses_with(emit(aten.select.int, node.args[0], dim, int(user.args[1])))
            graph.erase_node(user)
    if not node.users:
        graph.erase_node(node)


def _feeds_softmax(node: Node) -> bool:
    users = list(node.users)
    return len(users) == 1 and users[0].target in SOFTMAX_OPS and users[0].args[0] is node


def _tag_softmax_masks(model: GraphModule, node: Node, constants: ConstantEvaluator) -> bool:
    """Tags a mask that hides scores from a softmax (True if it did): a constant
    ``masked_fill`` becomes an added mask, and a constant mask one ``get_attr``."""
    if not _feeds_softmax(node):
        return False
    if node.target == aten.masked_fill.Scalar and float(node.args[2]) == -math.inf:
        condition = constants.value(node.args[1])
        if condition is not None:
            emit = Emitter(model.graph, node)
            mask = additive_mask(~condition, node.meta["val"].dtype)
            added = emit(aten.add.Tensor, node.args[0], emit.constant(model, "attention_mask", mask))
            node.replace_all_uses_with(added)
            model.graph.erase_node(node)
            node = added
        node.meta[MASKS_SOFTMAX] = 0
        return True
    for index, operand in enumerate(node.args[:2]):
        value = constants.value(operand)
        if value is not None and value.is_floating_point() and bool((value == -math.inf).any()):
            if operand.op != "get_attr":  # one constant: nothing on its way gets quantized
                folded = Emitter(model.graph, node).constant(model, "attention_mask", value)
                node.replace_input_with(operand, folded)
            node.meta[MASKS_SOFTMAX] = 1 - index
            return True
    return False


def write_out_attention(model: GraphModule) -> GraphModule:
    """Writes out every scaled_dot_product_attention and unbind, and tags softmax masks."""
    graph = model.graph
    constants = _evaluator(model)
    written = changed = 0
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        if node.target == aten.scaled_dot_product_attention.default:
            written += _write_out(model, node, constants)
        elif node.target == aten.unbind.int:
            _unbind_to_selects(graph, node)
            changed += 1
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target in (aten.add.Tensor, aten.masked_fill.Scalar):
            changed += _tag_softmax_masks(model, node, constants)
    if written or changed:
        graph.eliminate_dead_code()
        model.recompile()
    if written:
        logger.info("wrote out %d scaled_dot_product_attention operator(s)", written)
    return model
