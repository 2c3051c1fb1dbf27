"""A fully connected layer on a transposed input: ``bmm`` with one matrix repeated -> ``addmm``.

torch decomposes ``linear(x, w, b)`` (and ``x @ w``) by the strides ``x`` had when it was
traced. A row-major ``x`` of rank 3 or more becomes one matrix product of all its rows,
``addmm(b, view(x, [rows, K]), w.T)``. An ``x`` that is a transposed view
(``conv1d(x).transpose(1, 2)`` before a Linear or a GRU/LSTM, ``x.permute(0, 2, 3, 1)``
before a channel MLP) becomes a batched product whose second operand is ``w.T`` expanded
over the batch, ``bmm(x, expand(w.T, [batch, K, N]))``, then ``add(b)``: torch avoids
copying ``x``. Kiln's tensors are always row-major, so the two forms compute the same,
but a backend sees a batched product of a rank-3 "weight" in the second one (the Ethos-U
partitioner leaves it on the CPU and splits the delegate there).
:func:`fold_broadcast_matmuls` writes the second form as the first.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Optional

import torch
from torch.export import ExportedProgram
from torch.fx import Graph, Node

from kiln.passes.as_strided import call_like

logger = logging.getLogger(__name__)

aten = torch.ops.aten

# Operators that give their input's elements in the same row-major order (an expand only
# when it adds no elements) or, for the matrix operand, the same matrix for every batch.
_SAME_ELEMENTS = (aten.view.default, aten._unsafe_view.default, aten.clone.default, aten.alias.default,
                  aten.expand.default)


def _shape(node: Any) -> Optional[tuple[int, ...]]:
    """``node``'s static shape (None for a non-tensor or a shape known only at run time)."""
    value = node.meta.get("val") if isinstance(node, Node) else None
    if not isinstance(value, torch.Tensor) or not all(isinstance(d, int) for d in value.shape):
        return None
    return tuple(value.shape)


def _through_copies(node: Node) -> Node:
    """The first tensor up the chain of views, clones and non-broadcasting expands that ends
    at ``node``: it holds ``node``'s elements in the same row-major order."""
    elements = math.prod(_shape(node) or (0,))
    while node.op == "call_function" and node.target in _SAME_ELEMENTS and isinstance(node.args[0], Node):
        source_shape = _shape(node.args[0])
        if source_shape is None or math.prod(source_shape) != elements:
            break
        node = node.args[0]
    return node


def _repeated_matrix(node: Node) -> Optional[Node]:
    """The ``[K, N]`` matrix that batched operand ``node`` (``[..., K, N]``) repeats in every
    batch, or None when its batches may differ."""
    matrix = _shape(node)
    if matrix is None or len(matrix) < 2:
        return None
    while node.op == "call_function" and node.target in _SAME_ELEMENTS and isinstance(node.args[0], Node):
        source_shape = _shape(node.args[0])
        if source_shape is None or source_shape[-2:] != matrix[-2:]:
            return None
        node = node.args[0]
        if len(source_shape) == 2:
            return node
    return None


def _bias_add(product: Node, columns: int) -> Optional[tuple[Node, Node, list[Node]]]:
    """(add node, bias, the views between) when the product's only use is, through views, an
    ``add`` of a vector of ``columns`` values (the bias torch adds after a batched linear)."""
    views: list[Node] = []
    node = product
    while len(node.users) == 1:
        (user,) = node.users
        if user.op == "call_function" and user.target in (aten.view.default, aten._unsafe_view.default):
            views.append(user)
            node = user
            continue
        if user.op != "call_function" or user.target != aten.add.Tensor or user.kwargs.get("alpha", 1) != 1:
            return None
        if len(user.args) != 2 or not all(isinstance(a, Node) for a in user.args) or user.args[0] is user.args[1]:
            return None
        bias = user.args[1] if user.args[0] is node else user.args[0]
        if _shape(bias) != (columns,) or _shape(user) != _shape(node):
            return None
        return user, bias, views
    return None


def _erase_unused(graph: Graph, node: Any) -> None:
    """Erases ``node`` and the chain of views before it that only it read."""
    while isinstance(node, Node) and node.op == "call_function" and not node.users \
            and node.target in _SAME_ELEMENTS:
        source = node.args[0]
        graph.erase_node(node)
        node = source


def fold_broadcast_matmuls(program: ExportedProgram) -> int:
    """Rewrites (in place) each ``bmm(a, b)`` whose ``b`` is one ``[K, N]`` matrix repeated
    over the batch as ``view(mm(view(a, [rows, K]), matrix), shape)``, or as ``addmm`` with
    the bias when the product's only use is the add of one; returns how many it rewrote."""
    graph = program.graph_module.graph
    renamed: dict[str, str] = {}
    changed = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target != aten.bmm.default:
            continue
        left, right = node.args
        shape, left_shape = _shape(node), _shape(left)
        matrix = _repeated_matrix(right)
        if shape is None or left_shape is None or matrix is None:
            continue
        bias = _bias_add(node, _shape(matrix)[1])
        replaced = node if bias is None else bias[0]
        with graph.inserting_before(replaced):
            rows_of = _through_copies(left)
            if not rows_of.meta["val"].is_contiguous():  # a view to rows must read a row-major tensor
                rows_of = call_like(graph, left, aten.clone.default, (rows_of,), {"memory_format": torch.contiguous_format})
            rows = call_like(graph, left, aten.view.default, (rows_of, [math.prod(left_shape[:-1]), left_shape[-1]]))
            if bias is None:
                product = call_like(graph, node, aten.mm.default, (rows, matrix))
            else:
                product = call_like(graph, node, aten.addmm.default, (bias[1], rows, matrix))
            result = call_like(graph, replaced, aten.view.default, (product, list(_shape(replaced))))
        replaced.replace_all_uses_with(result)
        renamed[replaced.name] = result.name
        for dead in ([] if bias is None else [bias[0], *reversed(bias[2])]):
            graph.erase_node(dead)
        graph.erase_node(node)
        _erase_unused(graph, left)
        _erase_unused(graph, right)
        changed += 1
        logger.debug("bmm '%s' of a repeated matrix -> %s", node.name, product.name)
    if changed:
        for spec in program.graph_signature.output_specs:
            name = getattr(spec.arg, "name", None)
            if name in renamed:
                spec.arg.name = renamed[name]
        graph.lint()
        program.graph_module.recompile()
    return changed
