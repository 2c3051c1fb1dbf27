"""Drops torch.export's checks on values read out of tensors, and the reads only they use.

A model that sizes a tensor from a tensor's value (``torch.arange(int(lengths.max()))``, how
torchaudio builds a padding mask) exports, strictly, with that size fixed to the example's
value and a run-time check that the value is the same: ``aten.max`` ->
``aten._local_scalar_dense`` -> ``u0 == 24`` -> ``aten._assert_scalar``. Kiln's programs
have static shapes and never run those checks (``_assert_scalar`` is a compile-time check
for :mod:`kiln.passes.out_variants`), so the reads that feed only them compute nothing the
program uses: without this pass they would stay behind as CPU operators between delegates.
"""

from __future__ import annotations

import logging

import torch
from torch.export import ExportedProgram

from kiln.passes.aten_out_variants import COMPILE_TIME_CHECKS

logger = logging.getLogger(__name__)


def _operator_name(node: torch.fx.Node) -> str:
    target = node.target
    return target.name() if isinstance(target, torch._ops.OpOverload) else getattr(target, "__name__", str(target))


def _is_value_check(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and not node.users and _operator_name(node) in COMPILE_TIME_CHECKS


def _only_feeds_checks(node: torch.fx.Node, dropped: set[torch.fx.Node]) -> bool:
    """True for a call whose every user is dropped and that changes nothing itself: a read of
    a value (a scalar, ``_local_scalar_dense``) or arithmetic on symbolic values."""
    if node.op != "call_function" or not node.users or not all(user in dropped for user in node.users):
        return False
    value = node.meta.get("val")
    if isinstance(value, (torch.SymInt, torch.SymBool, torch.SymFloat, int, bool, float)):
        return True
    target = node.target
    # The 0-d tensor a value is read from (aten.max of the lengths).
    return (isinstance(value, torch.Tensor) and value.dim() == 0
            and isinstance(target, torch._ops.OpOverload) and not target._schema.is_mutable)


def drop_value_checks(program: ExportedProgram) -> int:
    """Removes (in place) the value checks of ``program`` and the nodes that only feed them;
    returns how many nodes it removed."""
    graph = program.graph_module.graph
    dropped = {node for node in graph.nodes if _is_value_check(node)}
    if not dropped:
        return 0
    changed = True
    while changed:
        changed = False
        for node in reversed(graph.nodes):
            if node not in dropped and _only_feeds_checks(node, dropped):
                dropped.add(node)
                changed = True
    for node in reversed(graph.nodes):
        if node in dropped:
            graph.erase_node(node)
    program.graph_module.recompile()
    logger.debug("dropped %d value check node(s)", len(dropped))
    return len(dropped)
