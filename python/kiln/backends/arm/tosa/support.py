"""What the TOSA lowering can take, in two questions the partitioner asks.

* :func:`is_lowerable` ``(node, compile_spec, constants)``: can this *operator* (its
  op, shapes, attributes and the target's limits) be lowered? It does not look at
  the quantize/dequantize nodes around the operator.
* :func:`group_problem` ``(nodes)``: can one *quantized group* - float operators
  connected without a quantize/dequantize between them, whose inputs are
  dequantized (or constant) and whose results are all quantized - be lowered as a
  whole? The lowering fuses an operator with the activations and views between it
  and its quantize node, turns a pointwise region of one int8 tensor into one TABLE
  and passes layout-only operators through; anything else inside a group has a
  float intermediate the integer graph cannot represent.

Both answers come from the op modules that lower the nodes, so "supported" means
"Kiln emits TOSA for it".
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Sequence
from typing import Any

import torch

from kiln.backends.arm.tosa.context import is_dequantize, is_quantize, is_view, qd
from kiln.backends.arm.tosa.ops import load_all
from kiln.backends.arm.tosa.ops.activation import check_table, is_pointwise, table_region, tensor_args
from kiln.passes.constant_values import ConstantEvaluator
from kiln.backends.arm.tosa.ops.resize import upsample_region
from kiln.passes.safe_softmax import applies_a_mask, masked_scores, softmax_guard
from kiln.passes.activations import activation_range

# Operators whose result is an exact rearrangement of their quantized input: the
# lowering binds the result to the input's quantization, no quantize node needed.
_DATA_MOVEMENT = {"lower_view", "lower_as_strided", "lower_permute", "lower_identity", "lower_expand", "lower_max_pool",
                  "lower_constant_pad", "lower_upsample_nearest", "lower_slice", "lower_select", "lower_split",
                  "lower_gather"}


def _lowering_name(node: torch.fx.Node) -> str:
    entry = load_all().get(node.target) if node.op == "call_function" else None
    return "" if entry is None else entry.name


def is_lowerable(node: torch.fx.Node, compile_spec: Any,
                 constants: Collection[torch.fx.Node] = ()) -> tuple[bool, str]:
    """(True, "") if the TOSA lowering can lower operator ``node`` for ``compile_spec``'s
    target, else (False, reason). Judges the operator only (op, shapes, attributes,
    target limits); q/dq nodes are always lowerable (they become RESCALEs or vanish).

    Args:
        constants: nodes computed from constants only, in graphs whose constants are
            placeholders (the partitioner's view); ``get_attr`` nodes are constants anyway.
    """
    if node.op != "call_function":
        return False, f"{node.op} nodes are not operators"
    if is_quantize(node) or is_dequantize(node):
        return True, ""
    if node.target in (qd().quantize_per_channel.default,):
        return False, "per-channel quantized activations are not lowered"
    if node.target is operator.getitem:
        return getitem_support(node)
    entry = load_all().get(node.target)
    reason = f"no TOSA lowering for {node.target}" if entry is None else entry.check(node, compile_spec, constants)
    if reason is None:
        return True, ""
    if is_pointwise(node) and check_table(node, compile_spec) is None:
        return True, ""  # e.g. x + 3 of a decomposed hardswish: part of a TABLE (see group_problem)
    return False, reason


# Multi-output operators whose first result the lowering binds (the others are indices or
# statistics nobody on the NPU reads).
_FIRST_RESULT_ONLY = (torch.ops.aten.max_pool2d_with_indices.default, torch.ops.aten.native_layer_norm.default)


# Multi-output operators whose every result the lowering binds.
_ALL_RESULTS = (torch.ops.aten.split_with_sizes.default, torch.ops.aten.split_with_sizes_copy.default)


def getitem_support(node: torch.fx.Node) -> tuple[bool, str]:
    source = getattr(node.args[0], "target", None)
    if (node.args[1] == 0 and source in _FIRST_RESULT_ONLY) or source in _ALL_RESULTS:
        return True, ""
    return False, ("only the results of split_with_sizes and the first result of max_pool2d_with_indices and "
                   "native_layer_norm are lowered")


def _through_data_movement(node: Any, inside: set[torch.fx.Node]) -> Any:
    """Walks back through the group's layout-only operators to where the value comes from."""
    while isinstance(node, torch.fx.Node) and node in inside:
        if node.target is operator.getitem:  # a part of a split, the first result of a max pool
            node = node.args[0]
        elif _lowering_name(node) in _DATA_MOVEMENT:
            node = node.args[0]
        else:
            break
    return node


def _fused_chain(node: torch.fx.Node, inside: set[torch.fx.Node]) -> tuple[list[torch.fx.Node], str | None]:
    """The activations/views the lowering fuses after ``node`` up to its quantize node,
    or the reason there is no such chain."""
    chain: list[torch.fx.Node] = []
    current = node
    while True:
        users = list(current.users)
        if len(users) != 1:
            return chain, (f"the result of '{node.name}' has {len(users)} users; the NPU needs it quantized "
                           "once before any other use")
        user = users[0]
        if is_quantize(user):
            return chain, None
        fusable = activation_range(user) is not None or is_view(user) or (
            user.target is operator.getitem and user.args[1] == 0 and node.target in _FIRST_RESULT_ONLY)
        if user not in inside or not fusable or user.args[0] is not current:
            return chain, (f"the result of '{node.name}' feeds '{user.name}' ({user.target}) without a "
                           "quantize node between them")
        chain.append(user)
        current = user


def _table_region(node: torch.fx.Node, inside: set[torch.fx.Node], compile_spec: Any) -> Any:
    """The TABLE region the lowering makes when it meets ``node`` first (inside the group)."""
    region = table_region(node, compile_spec)
    return region if region is not None and set(region.nodes) <= inside else None


def _is_exact(node: torch.fx.Node) -> bool:
    """True if ``node`` computes integers or bools (a mask from a ``lengths`` input)."""
    value = node.meta.get("val")
    return isinstance(value, torch.Tensor) and not value.dtype.is_floating_point


def group_problem(nodes: Sequence[torch.fx.Node], compile_spec: Any = None) -> str | None:
    """None if the lowering can lower this quantized group, else the reason.

    ``nodes``: the group's float operators in graph order; their inputs from outside
    the group are dequantize nodes or constants, their users outside are quantize
    nodes (the partitioner checks that). Each operator must be lowerable
    (:func:`is_lowerable`); this judges only how the group is quantized inside.
    """
    inside = set(nodes)
    covered: set[torch.fx.Node] = set()
    no_leaves = ConstantEvaluator(lambda _: None)  # index arithmetic starts from creation operators
    for node in nodes:
        runtime = masked_scores(node, no_leaves.value) if applies_a_mask(node) else None
        if runtime is not None and {runtime[1].where, *runtime[1].moves} <= inside:
            covered.update([runtime[1].where, *runtime[1].moves])  # a mask the softmax applies (bool)
    for node in nodes:
        if node in covered or node.target is operator.getitem:
            continue
        if _is_exact(node):
            covered.add(node)  # integer and bool values: exact, nothing to quantize
            continue
        if applies_a_mask(node) and next(iter(node.users)) in inside:
            covered.add(node)  # the softmax applies it to its scores
            continue
        upsampling = upsample_region(node, no_leaves)
        if upsampling is not None and set(upsampling.nodes) <= inside:
            covered.update(upsampling.nodes)  # lowered as one RESIZE
            continue
        region = _table_region(node, inside, compile_spec)
        if region is not None:
            source = _through_data_movement(region.source, inside)
            if source in inside:
                return (f"'{node.name}' starts a pointwise function of '{region.source.name}', which is not "
                        "quantized (a TABLE needs an int8 input)")
            covered.update(region.nodes)
            continue
        for arg in tensor_args(node):
            source = _through_data_movement(arg, inside)
            if source in inside and source not in covered:
                return (f"input '{arg.name}' of '{node.name}' is computed in float by '{source.name}' "
                        "without a quantize node between them")
        if _lowering_name(node) in _DATA_MOVEMENT or node.target is operator.getitem:
            continue
        guard = softmax_guard(node) if _lowering_name(node) == "lower_softmax" else None
        if guard is not None and set(guard.nodes) <= inside:
            covered.update(guard.nodes)  # lowered with the softmax (its result is the softmax's)
            node = guard.result
        chain, problem = _fused_chain(node, inside)
        if problem is not None:
            if _lowering_name(node) == "lower_cat":
                continue  # a concatenation of same-quantized inputs stays in their quantization
            return problem
        covered.update(chain)
    return None
