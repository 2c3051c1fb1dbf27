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
from kiln.passes.delegation import constant_tensors, is_dequantize

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
    """True if ``node`` is an add whose only reader is a softmax of it: a backend may apply
    a mask it adds inside the softmax (nothing else sees the -inf)."""
    users = list(node.users)
    return (_is_call(node, aten.add.Tensor) and len(users) == 1 and _is_call(users[0], *SOFTMAX_TARGETS)
            and users[0].args[0] is node)


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


def _is_call(node: object, *targets: object) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in targets


@dataclass(frozen=True)
class _Guard:
    result: torch.fx.Node  # the where node
    probabilities: torch.fx.Node  # the _softmax node it guards
    nodes: list[torch.fx.Node]  # where, full_like, logical_not, any, logical_not, eq


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
