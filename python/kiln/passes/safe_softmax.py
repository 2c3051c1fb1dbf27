"""The safe-softmax guard dropped where a quantized graph proves that it changes nothing.

``scaled_dot_product_attention`` (and ``torch._safe_softmax``) decompose into a softmax and
a guard that gives 0 instead of NaN in rows whose every score is -inf (rows that a mask
hides entirely)::

    probabilities = _softmax(x, dim)
    hidden = logical_not(any(logical_not(eq(x, -inf)), dim, keepdim=True))
    result = where(hidden, full_like(probabilities, 0), probabilities)

``result == probabilities`` unless a row of ``x`` is all -inf. In a quantized graph the
scores are a dequantized integer tensor, never -inf, or that plus a constant mask
(:func:`softmax_mask`): a row is then all -inf exactly where the mask is -inf along the
whole row, which the constant tells at compile time. Where no row is hidden the guard is
the identity and :func:`fold_safe_softmax_guards` drops it, so that the softmax runs
wherever a softmax runs (an integer NPU has neither -inf nor, on most targets, boolean
reductions). In a float graph the scores may be -inf (an infinite input, a product that
overflows): there the guard is not the identity, and it stays.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.export import ExportedProgram

from kiln.passes.constant_values import ConstantEvaluator
from kiln.passes.delegation import constant_tensors, is_dequantize, operator_name

logger = logging.getLogger(__name__)

aten = torch.ops.aten

ConstantValue = Callable[[torch.fx.Node], "torch.Tensor | None"]
SOFTMAX_TARGETS = (aten._softmax.default, aten.softmax.int)


@dataclass(frozen=True)
class SoftmaxMask:
    """A softmax's input written as ``scores + mask`` with a constant mask."""

    add: torch.fx.Node
    scores: torch.fx.Node
    mask: torch.fx.Node
    # bool, at the add's rank and broadcastable to its shape: False where the mask is -inf.
    keep: torch.Tensor
    only_hides: bool  # every other mask value is 0: the mask hides scores, it does not shift them

    def hides_a_row(self, dim: int) -> bool:
        """True if the mask is -inf along a whole row of ``dim`` (that row's softmax is NaN)."""
        shape = tuple(self.add.meta["val"].shape)
        return bool((~self.keep.expand(shape).any(dim=dim)).any())


def applies_a_mask(node: torch.fx.Node) -> bool:
    """True if ``node`` is an add read by a softmax of it and, besides, at most by that
    softmax's safe-softmax guard: a backend may apply a mask it adds inside the softmax
    (nothing else sees the -inf)."""
    if not _is_call(node, aten.add.Tensor):
        return False
    softmaxes = [u for u in node.users if _is_call(u, *SOFTMAX_TARGETS) and u.args[0] is node]
    if len(softmaxes) != 1:
        return False
    guard = softmax_guard(softmaxes[0])
    others = set(node.users) - {softmaxes[0]}
    return not others or (guard is not None and others <= set(guard.nodes))


# Operators that only carry a mask's values to the add that applies it (the -inf and 0 of
# each element stay where broadcasting puts them).
_MASK_MOVES = (aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.expand.default,
               aten.clone.default, aten.unsqueeze.default, aten.squeeze.dims, aten.squeeze.dim,
               aten.alias.default)


@dataclass(frozen=True)
class RuntimeMask:
    """A mask computed from the inputs: ``where(hidden, -inf, 0)`` (or ``where(kept, 0, -inf)``),
    moved by views and broadcasts to the scores it is added to."""

    where: torch.fx.Node
    condition: torch.fx.Node  # bool
    hides_where_true: bool  # True for where(hidden, -inf, 0)
    moves: list[torch.fx.Node]  # the views/expands/clones from the where to the add


def runtime_mask(node: object, value: ConstantValue) -> RuntimeMask | None:
    """``node`` (an add's mask operand) as a 0/-inf mask selected by a computed bool
    tensor, or None. ``value`` gives the constant branches' values."""
    moves: list[torch.fx.Node] = []
    while _is_call(node, *_MASK_MOVES) and len(node.users) == 1:
        moves.append(node)
        node = node.args[0]
    if not _is_call(node, aten.where.self) or len(node.users) != 1 or len(node.args) != 3:
        return None
    condition, when_true, when_false = node.args
    if not isinstance(condition, torch.fx.Node) or condition.meta["val"].dtype != torch.bool:
        return None
    if value(condition) is not None:
        return None  # a constant mask (softmax_mask's business)
    branches = [_constant_fill(b, value) for b in (when_true, when_false)]
    if branches == [-math.inf, 0.0]:
        return RuntimeMask(node, condition, True, moves[::-1])
    if branches == [0.0, -math.inf]:
        return RuntimeMask(node, condition, False, moves[::-1])
    return None


def _constant_fill(node: object, value: ConstantValue) -> float | None:
    """The one value every element of constant ``node`` holds (through a dequantize of a
    quantized constant), or None."""
    if isinstance(node, (int, float)):
        return float(node)
    if not isinstance(node, torch.fx.Node):
        return None
    if _is_call(node, aten.full_like.default) and len(node.args) > 1 and isinstance(node.args[1], (int, float)):
        return float(node.args[1])
    if is_dequantize(node) and _is_quantize(node.args[0]):
        fill = _constant_fill(node.args[0].args[0], value)
        return None if fill is None or not math.isfinite(fill) or fill != 0.0 else 0.0
    tensor = value(node)
    if tensor is None or tensor.numel() == 0:
        return None
    first = tensor.reshape(-1)[0]
    return float(first) if bool((tensor == first).all()) else None


def masked_scores(node: torch.fx.Node, value: ConstantValue) -> tuple[torch.fx.Node, RuntimeMask] | None:
    """(the scores, their runtime mask) if softmax input ``node`` adds a runtime mask to
    dequantized scores, else None."""
    if not applies_a_mask(node) or len(node.args) > 2 or node.kwargs.get("alpha", 1) != 1:
        return None
    a, b = node.args[:2]
    for scores, mask in ((a, b), (b, a)):
        if is_dequantize(scores):
            found = runtime_mask(mask, value)
            if found is not None:
                return scores, found
    return None


def softmax_mask(node: object, value: ConstantValue) -> SoftmaxMask | None:
    """``node`` as dequantized (finite) scores plus a constant float mask of finite values
    and -inf, or None."""
    if not isinstance(node, torch.fx.Node) or node.op != "call_function" or node.target != aten.add.Tensor:
        return None
    operands = [a for a in node.args[:2] if isinstance(a, torch.fx.Node)]
    if len(operands) != 2 or len(node.args) > 2 or node.kwargs.get("alpha", 1) != 1:
        return None
    for scores, mask in (operands, operands[::-1]):
        if not is_dequantize(scores) or is_dequantize(mask):
            continue
        tensor = value(mask)
        if tensor is None or not tensor.is_floating_point():
            return None
        if bool(torch.isnan(tensor).any()) or bool((tensor == math.inf).any()):
            return None
        rank = node.meta["val"].dim()
        keep = (tensor != -math.inf).reshape((1,) * (rank - tensor.dim()) + tuple(tensor.shape))
        only_hides = bool((tensor[tensor != -math.inf] == 0).all())
        return SoftmaxMask(node, scores, mask, keep, only_hides)
    return None


def _is_quantize(node: object) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" \
        and operator_name(node) == "quantized_decomposed::quantize_per_tensor"


def _is_call(node: object, *targets: object) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in targets


@dataclass(frozen=True)
class _Guard:
    result: torch.fx.Node  # the where node
    probabilities: torch.fx.Node  # the _softmax node it guards
    nodes: list[torch.fx.Node]  # where, full_like, logical_not, any, logical_not, eq


def softmax_guard(softmax: torch.fx.Node) -> _Guard | None:
    """The safe-softmax guard that reads ``softmax``, or None."""
    for user in softmax.users:
        guard = _guard_of(user)
        if guard is not None and guard.probabilities is softmax:
            return guard
    return None


def _guard_of(where: torch.fx.Node) -> _Guard | None:
    """The safe-softmax guard ending in ``where``, or None."""
    if not _is_call(where, aten.where.self) or len(where.args) != 3:
        return None
    hidden, zeros, probabilities = where.args
    if not _is_call(probabilities, *SOFTMAX_TARGETS):
        return None
    if not (_is_call(zeros, aten.full_like.default) and zeros.args[0] is probabilities and zeros.args[1] == 0):
        return None
    if not _is_call(hidden, aten.logical_not.default):
        return None
    reduce = hidden.args[0]
    if not _is_call(reduce, aten.any.dim) or len(reduce.args) < 3 or reduce.args[2] is not True:
        return None
    finite = reduce.args[0]
    if not _is_call(finite, aten.logical_not.default):
        return None
    infinite = finite.args[0]
    if not _is_call(infinite, aten.eq.Scalar) or infinite.args[1] != -math.inf:
        return None
    x = probabilities.args[0]
    if infinite.args[0] is not x:
        return None
    rank = max(x.meta["val"].dim(), 1)
    if int(reduce.args[1]) % rank != int(probabilities.args[1]) % rank:
        return None
    return _Guard(where, probabilities, [where, zeros, hidden, reduce, finite, infinite])


def guard_is_identity(guard: _Guard, value: ConstantValue) -> bool:
    """True if no row of the guarded softmax's input can be all -inf."""
    x = guard.probabilities.args[0]
    if is_dequantize(x):
        return True
    mask = softmax_mask(x, value)
    if mask is None:
        return False
    rank = max(x.meta["val"].dim(), 1)
    return not mask.hides_a_row(int(guard.probabilities.args[1]) % rank)


def fold_safe_softmax_guards(program: ExportedProgram) -> int:
    """Drops every safe-softmax guard of ``program`` that is the identity; returns how many."""
    constants = constant_tensors(program)
    evaluator = ConstantEvaluator(lambda n: constants.get(n.name) if n.op == "placeholder" else None)
    graph = program.graph_module.graph
    folded = 0
    for node in list(graph.nodes):
        guard = _guard_of(node)
        if guard is None or not guard_is_identity(guard, evaluator.value):
            continue
        guard.result.replace_all_uses_with(guard.probabilities)
        for dead in guard.nodes:
            if not dead.users:
                graph.erase_node(dead)
        folded += 1
    if folded:
        program.graph_module.recompile()
        logger.info("dropped %d safe-softmax guard(s): their scores are never -inf", folded)
    return folded
