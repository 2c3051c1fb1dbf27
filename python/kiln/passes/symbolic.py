"""Bounded dynamic shapes in the lowering: upper bounds of symbolic sizes, and the
calls that compute sizes while the method runs.

A program exported with ``torch.export.Dim(..., max=N)`` has symbolic sizes
(``s0``, ``2*s0 - 1``). Each tensor's memory is planned for the largest value its
sizes can take, which :func:`upper_bound` derives from the program's range
constraints; the kernels then resize their outputs within that bound. Sizes the
graph reads at run time (``aten.sym_size.int``) and arithmetic on them
(``operator.mul``...) become calls of the runtime's ``aten::sym_size.int`` and
``executorch_prim::*.Scalar`` kernels, which write Int values that later calls read
(e.g. in the size list of a view).
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Mapping, Optional, Union

import sympy
import torch
from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

from kiln import ExportError
from kiln.ir.method_graph import Int, KernelCall, ScalarValue, TensorValue

# Runtime operators for the Python operators torch.export leaves on symbolic ints.
PRIM_OPERATORS: dict[Any, str] = {
    operator.add: "executorch_prim::add.Scalar",
    operator.sub: "executorch_prim::sub.Scalar",
    operator.mul: "executorch_prim::mul.Scalar",
    operator.floordiv: "executorch_prim::floordiv.Scalar",
}

# ATen operators that read a tensor's current size, and their runtime kernels.
SIZE_OPERATORS: dict[Any, str] = {
    torch.ops.aten.sym_size.int: "aten::sym_size.int",
    torch.ops.aten.sym_numel.default: "aten::sym_numel",
}

RangeConstraints = Mapping[Any, ValueRanges]
ValueLookup = Callable[[torch.fx.Node], Union[TensorValue, ScalarValue]]


def is_size_computation(node: torch.fx.Node) -> bool:
    """True for a call that computes a number (a size) rather than a tensor."""
    return node.target in PRIM_OPERATORS or node.target in SIZE_OPERATORS


def upper_bound(size: Any, ranges: RangeConstraints, what: str) -> int:
    """The largest value ``size`` (an int or a SymInt) can take.

    Raises:
        ExportError: the size has no finite upper bound (a ``Dim`` without ``max``).
    """
    if not isinstance(size, torch.SymInt):
        return int(size)
    expression = size.node.expr
    bound = bound_sympy(expression, dict(ranges)).upper
    # An unbounded size's bound is torch's int_oo (a sympy Number, but no Integer).
    if not isinstance(bound, sympy.Integer):
        symbols = ", ".join(sorted(str(s) for s in expression.free_symbols))
        raise ExportError(
            f"{what} has size {expression}, which has no upper bound: give each dynamic "
            f"dimension a maximum, torch.export.Dim(name, max=N) (symbols {symbols}); Kiln "
            "plans memory for the largest size"
        )
    return int(bound)


def upper_bound_shape(shape: tuple[Any, ...], ranges: RangeConstraints, what: str) -> tuple[tuple[int, ...], bool]:
    """(upper-bound sizes, whether any size is symbolic)."""
    bounds = tuple(upper_bound(size, ranges, what) for size in shape)
    return bounds, any(isinstance(size, torch.SymInt) for size in shape)


def size_call(node: torch.fx.Node, lookup: ValueLookup) -> tuple[KernelCall, ScalarValue]:
    """The kernel call computing a size node (sym_size, sym_numel, +, -, *, //) and
    the Int value it writes.

    Raises:
        ExportError: an operand is neither an int nor a size computed earlier.
    """
    result = ScalarValue(node.name, _example_int(node))
    if node.target in SIZE_OPERATORS:
        tensor = lookup(node.args[0])
        extra = [Int(int(node.args[1]))] if node.target is torch.ops.aten.sym_size.int else []
        args = [tensor, *extra, result]
        return KernelCall(SIZE_OPERATORS[node.target], args, [], node.name, [result]), result
    operands = [_operand(node, value, lookup) for value in node.args]
    call = KernelCall(PRIM_OPERATORS[node.target], [*operands, result], [], node.name, [result])
    return call, result


def _operand(node: torch.fx.Node, value: Any, lookup: ValueLookup) -> Union[Int, ScalarValue]:
    if isinstance(value, torch.fx.Node):
        operand = lookup(value)
        if isinstance(operand, ScalarValue):
            return operand
    elif isinstance(value, int) and not isinstance(value, bool):
        return Int(value)
    raise ExportError(
        f"node '{node.name}' ({node.target.__name__}) computes a size from {value!r}; Kiln's "
        "size arithmetic takes ints and sizes only"
    )


def _example_int(node: torch.fx.Node) -> int:
    """A placeholder value for the Int slot (the method overwrites it before use)."""
    value = node.meta.get("val")
    hint: Optional[int] = None
    if isinstance(value, torch.SymInt):
        hint = value.node.hint if isinstance(value.node.hint, int) else None
    elif isinstance(value, int):
        hint = value
    if value is not None and not isinstance(value, (int, torch.SymInt)):
        raise ExportError(
            f"node '{node.name}' computes a {type(value).__name__}; Kiln's size arithmetic "
            "computes ints only"
        )
    return 0 if hint is None else int(hint)


def check_only_nodes(graph: torch.fx.Graph, is_check: Callable[[torch.fx.Node], bool]) -> set[torch.fx.Node]:
    """Nodes the lowering leaves out: run-time checks torch.export inserts (``is_check``)
    and the size computations (``s0 >= 2``) that only those checks read. The program's
    range constraints were verified at export; memory planning enforces the bounds."""
    dropped: set[torch.fx.Node] = set()
    for node in reversed(list(graph.nodes)):
        if node.op != "call_function":
            continue
        if is_check(node):
            dropped.add(node)
        elif (
            node.users
            and all(user in dropped for user in node.users)
            and not isinstance(node.meta.get("val"), torch.Tensor)
        ):
            dropped.add(node)
    return dropped
