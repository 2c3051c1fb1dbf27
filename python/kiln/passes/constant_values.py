"""Values of graph nodes computed from constants only, evaluated with PyTorch on demand.

A graph may compute tensors that depend on no input: a GRU's zero initial state
(``full``), the index arithmetic of an upsampling (``arange``, ``mul``), an attention
mask (``eq`` of a buffer). Passes and backends ask for those values at compile time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

# Operators that make a tensor from their arguments alone (no tensor inputs). Random or
# uninitialised ones (rand, empty) are not constants.
CREATION_OPERATORS = frozenset({
    "aten::full", "aten::zeros", "aten::ones", "aten::arange", "aten::arange.start", "aten::arange.start_step",
    "aten::scalar_tensor", "aten::eye", "aten::eye.m",
})


def operator_name(target: Any) -> str:
    """``aten::arange.start`` for an OpOverload, ``str(target)`` for anything else."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return str(target)
    overload = getattr(target, "_overloadname", "default")
    return schema.name + ("" if overload == "default" else f".{overload}")


class ConstantEvaluator:
    """Values of nodes computed from constants only, evaluated on demand with PyTorch.

    ``leaf(node)`` gives the tensor of a placeholder or ``get_attr`` node, or None when it
    is not a constant; creation operators need no leaf. :meth:`value` is None for nodes
    that depend on something else.
    """

    def __init__(self, leaf: Callable[[torch.fx.Node], torch.Tensor | None]) -> None:
        self._leaf = leaf
        self._memo: dict[torch.fx.Node, torch.Tensor | None] = {}

    def value(self, node: Any) -> torch.Tensor | None:
        if not isinstance(node, torch.fx.Node):
            return None
        # Depth first without recursion: a node that depends on an input may sit a thousand
        # nodes below the first one that does not (a deep network), past Python's stack.
        stack = [node]
        while stack:
            current = stack[-1]
            if current in self._memo:
                stack.pop()
                continue
            waiting = [s for s in current.all_input_nodes if s not in self._memo]
            if current.op == "call_function" and waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            self._memo[current] = self._evaluate(current)
        return self._memo[node]

    def _evaluate(self, node: torch.fx.Node) -> torch.Tensor | None:
        """``node``'s value once its inputs' values are known."""
        if node.op in ("placeholder", "get_attr"):
            return self._leaf(node)
        if node.op != "call_function":
            return None
        if not node.all_input_nodes and operator_name(node.target) not in CREATION_OPERATORS:
            return None
        inputs = {source: self._memo[source] for source in node.all_input_nodes}
        if any(value is None for value in inputs.values()):
            return None
        args, kwargs = torch.fx.map_arg((node.args, node.kwargs), inputs.__getitem__)
        result = node.target(*args, **kwargs)
        return result if isinstance(result, torch.Tensor) else None
