"""``aten.as_strided`` in a core-ATen program: a view where it only restrides, a copy otherwise.

``as_strided(x, size, stride, offset)`` reads the *storage* under ``x``: the elements in
the order eager PyTorch laid them out, not ``x``'s logical order. torch.export records
the strides eager had, so a model run channels-last gets, after a global pool,
``as_strided(mean, [1, 32, 1, 1], [32, 1, 32, 32])``: a change of strides over the same
32 values. Kiln's tensors are always contiguous in logical order, so the graph must say
what it reads in those terms. :func:`rewrite_as_strided` does that, before partitioning
and lowering:

* the storage is the tensor that created it (the *owner*: the first node up the chain of
  views that shares it), read in its memory order: ``owner.permute(order)`` when its
  strides are not row-major (a clone of that permute, so that the graph stays eager-valid);
* a read that is dense (every element of a contiguous range of the storage once, in some
  dim order) becomes ``view`` (after a ``slice`` of the flat storage if it reads only part
  of it) and a ``permute`` if its dim order is not row-major: data movement every backend
  knows, free on the CPU when it is a view to the same shape;
* any other read (overlapping windows, gaps) stays ``aten.as_strided`` on the row-major
  storage, which the CPU runs with its ``aten::as_strided_copy.out`` kernel.

What cannot be said in those terms (sizes known only at run time, a storage that holds
more than its owner, a read outside the storage) fails the compile, naming the node.

:func:`reshape_objection` tells the backends when an ``as_strided`` they meet is a plain
reshape of its input (row-major in, row-major out, every element once): they lower it as
one, and give the returned reason otherwise.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

import torch
from torch.export import ExportedProgram
from torch.multiprocessing.reductions import StorageWeakRef

from kiln import UnsupportedOperatorError

logger = logging.getLogger(__name__)

aten = torch.ops.aten
AS_STRIDED = aten.as_strided.default
OPERATOR = "aten::as_strided"


def _ints(values: Any) -> Optional[tuple[int, ...]]:
    """``values`` as plain ints, or None when one is symbolic (known only at run time)."""
    items = list(values)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        return None
    return tuple(items)


def dense_order(size: Sequence[int], stride: Sequence[int]) -> Optional[tuple[int, ...]]:
    """The dims of a tensor with these sizes and strides from outermost to innermost in
    memory, if it covers ``numel`` consecutive elements once each; else None.

    Size-1 dims carry no layout (any stride): they keep their place in the order, so a
    row-major tensor gets the identity whatever those strides are."""
    if any(s == 0 for s in size):
        return None  # an empty read: nothing to lay out (the copy kernel handles it)
    spread = sorted((d for d in range(len(size)) if size[d] != 1), key=lambda d: -stride[d])
    expected = 1
    for d in reversed(spread):
        if stride[d] != expected:
            return None
        expected *= size[d]
    placed = iter(spread)
    return tuple(d if size[d] == 1 else next(placed) for d in range(len(size)))


def _is_identity(order: Sequence[int]) -> bool:
    return tuple(order) == tuple(range(len(order)))


def _inverse(order: Sequence[int]) -> list[int]:
    result = [0] * len(order)
    for position, dim in enumerate(order):
        result[dim] = position
    return result


def _fake(node: Any) -> Optional[torch.Tensor]:
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None


def _storage_elements(value: torch.Tensor) -> Optional[int]:
    """Elements in ``value``'s storage; None when torch.export left that size symbolic (an
    example input that was a view of a larger tensor)."""
    nbytes = value.untyped_storage().nbytes()
    return nbytes // value.element_size() if isinstance(nbytes, int) else None


def _arguments(node: torch.fx.Node) -> tuple[Any, Any, Any]:
    size = node.args[1] if len(node.args) > 1 else node.kwargs.get("size")
    stride = node.args[2] if len(node.args) > 2 else node.kwargs.get("stride")
    offset = node.args[3] if len(node.args) > 3 else node.kwargs.get("storage_offset")
    return size, stride, 0 if offset is None else offset


@dataclass(frozen=True)
class StridedRead:
    """One ``as_strided`` call in Kiln's terms: which storage it reads, and how."""

    owner: torch.fx.Node  # the node whose result is the storage
    owner_order: tuple[int, ...]  # the owner's dims in memory order (identity: row-major)
    elements: int  # elements in the storage
    size: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int

    @property
    def numel(self) -> int:
        return math.prod(self.size)

    @property
    def order(self) -> Optional[tuple[int, ...]]:
        """The read's dim order when it is dense within the storage, else None."""
        order = dense_order(self.size, self.stride)
        return order if order is not None and self.offset + self.numel <= self.elements else None


def _storage_owner(source: torch.fx.Node) -> torch.fx.Node:
    """The node up ``source``'s chain of views (``args[0]``) that created its storage."""
    storage = StorageWeakRef(_fake(source).untyped_storage())  # type: ignore[union-attr]
    current = source
    while current.op == "call_function" and current.args and isinstance(current.args[0], torch.fx.Node):
        parent = _fake(current.args[0])
        if parent is None or StorageWeakRef(parent.untyped_storage()) != storage:
            break
        current = current.args[0]
    return current


def _read_arguments(node: torch.fx.Node) -> tuple[Optional[tuple[tuple[int, ...], tuple[int, ...], int]], str]:
    """((size, stride, offset), "") as plain ints, or (None, why they are not usable)."""
    size, stride, offset = _arguments(node)
    size, stride, offsets = _ints(size), _ints(stride), _ints([offset])
    if size is None or stride is None or offsets is None:
        return None, "its sizes, strides or offset are known only at run time"
    if len(size) != len(stride):
        return None, f"size {list(size)} and stride {list(stride)} differ in length"
    if min((*size, *stride, offsets[0]), default=0) < 0:
        return None, f"negative size, stride or offset (size {list(size)}, stride {list(stride)}, offset {offsets[0]})"
    return (size, stride, offsets[0]), ""


def _storage_layout(owner: torch.fx.Node) -> tuple[Optional[tuple[tuple[int, ...], int]], str]:
    """((the owner's dims in memory order, elements of its storage), "") when the owner
    holds exactly its storage, densely; else (None, why not)."""
    held = _fake(owner)
    shape, strides = _ints(held.shape), _ints(held.stride())  # type: ignore[union-attr]
    if shape is None or strides is None:
        return None, f"the storage it reads ('{owner.name}') has sizes known only at run time"
    order = dense_order(shape, strides) if math.prod(shape) else tuple(range(len(shape)))
    elements = _storage_elements(held)  # type: ignore[arg-type]
    offset = held.storage_offset()  # type: ignore[union-attr]
    if order is None or elements is None or offset != 0 or elements != math.prod(shape):
        held_elements = "an unknown number of" if elements is None else elements
        return None, (f"the storage it reads holds more than '{owner.name}' (shape {list(shape)}, strides "
                      f"{list(strides)}, offset {offset}, {held_elements} elements; an example input that is a "
                      "view of a larger tensor?): Kiln's tensors hold exactly their elements")
    return (order, elements), ""


def strided_read(node: torch.fx.Node) -> tuple[Optional[StridedRead], str]:
    """(the read ``node`` makes, "") or (None, why Kiln cannot say what it reads)."""
    if _fake(node.args[0]) is None:
        return None, "its input has no tensor metadata"
    arguments, reason = _read_arguments(node)
    if arguments is None:
        return None, reason
    owner = _storage_owner(node.args[0])
    layout, reason = _storage_layout(owner)
    if layout is None:
        return None, reason
    read = StridedRead(owner, layout[0], layout[1], *arguments)
    last = read.offset + sum((n - 1) * s for n, s in zip(read.size, read.stride))
    if read.numel and last >= read.elements:
        return None, (f"size {list(read.size)}, stride {list(read.stride)} and offset {read.offset} reach element "
                      f"{last} of a storage of {read.elements}")
    return read, ""


def reshape_objection(node: torch.fx.Node) -> Optional[str]:
    """None if ``as_strided`` node ``node`` is a reshape of its input to its size (its
    input and result row-major, every element read once, in order); else why it is not."""
    value = _fake(node.args[0])
    size, stride, offset = _arguments(node)
    size, stride = _ints(size), _ints(stride)
    if value is None or _ints(value.shape) is None or size is None or stride is None or not isinstance(offset, int):
        return "as_strided with sizes known only at run time is not a reshape"
    if not value.is_contiguous() or value.storage_offset() != 0 or _storage_elements(value) != value.numel():
        return (f"as_strided of a tensor not stored in row-major order (strides {list(value.stride())}, offset "
                f"{value.storage_offset()}): it reads another order than the tensor's")
    read = f"as_strided(size {list(size)}, stride {list(stride)}, offset {offset}) of a {list(value.shape)} tensor"
    order = dense_order(size, stride)
    if order is None:
        return f"{read} reads some elements twice or skips some: a gather, not a reshape"
    if offset != 0 or math.prod(size) != value.numel():
        return f"{read} reads a part of it: a slice, not a reshape"
    if not _is_identity(order):
        return f"{read} reads it in dim order {list(order)}: a transpose, not a reshape"
    return None


def call_like(graph: torch.fx.Graph, like: torch.fx.Node, target: Any, args: tuple[Any, ...],
              kwargs: Optional[dict[str, Any]] = None) -> torch.fx.Node:
    """A call of ``target`` before nothing in particular (the caller's insertion point),
    with ``like``'s metadata and its fake result."""
    node = graph.call_function(target, args, kwargs or {})
    node.meta.update({key: value for key, value in like.meta.items() if key != "val"})
    fake_args = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in args]
    node.meta["val"] = target(*fake_args, **(kwargs or {}))
    return node


def _row_major_storage(graph: torch.fx.Graph, node: torch.fx.Node, read: StridedRead) -> torch.fx.Node:
    """The storage as a tensor whose row-major order is the storage's order."""
    if _is_identity(read.owner_order):
        return read.owner
    permuted = call_like(graph, node, aten.permute.default, (read.owner, list(read.owner_order)))
    return call_like(graph, node, aten.clone.default, (permuted,), {"memory_format": torch.contiguous_format})


def _as_views(graph: torch.fx.Graph, node: torch.fx.Node, read: StridedRead, order: tuple[int, ...]) -> torch.fx.Node:
    """A dense read as slice/view/permute of the row-major storage."""
    storage = _row_major_storage(graph, node, read)
    if read.offset != 0 or read.numel != read.elements:
        flat = call_like(graph, node, aten.view.default, (storage, [read.elements]))
        storage = call_like(graph, node, aten.slice.Tensor, (flat, 0, read.offset, read.offset + read.numel))
    laid_out = [read.size[d] for d in order]
    result = call_like(graph, node, aten.view.default, (storage, laid_out))
    if not _is_identity(order):
        result = call_like(graph, node, aten.permute.default, (result, _inverse(order)))
    return result


def _as_copy(graph: torch.fx.Graph, node: torch.fx.Node, read: StridedRead) -> torch.fx.Node:
    """A gather read: ``as_strided`` of the row-major storage (the CPU's copy kernel)."""
    storage = _row_major_storage(graph, node, read)
    return call_like(graph, node, AS_STRIDED, (storage, list(read.size), list(read.stride), read.offset))


def _is_no_op(node: torch.fx.Node) -> bool:
    """True if ``node`` reshapes its input to the input's own shape (a restride of the same
    elements in the same order) and is no graph output: it can go."""
    source = node.args[0]
    same_shape = tuple(_fake(source).shape) == tuple(_fake(node).shape)  # type: ignore[union-attr]
    return same_shape and reshape_objection(node) is None and all(user.op != "output" for user in node.users)


def _erase_unused_views(graph: torch.fx.Graph, node: Any) -> None:
    """Erases the chain of views that led only to a rewritten ``as_strided`` (it now reads
    their storage owner directly)."""
    while isinstance(node, torch.fx.Node) and node.op == "call_function" and not node.users \
            and node.args and isinstance(node.args[0], torch.fx.Node):
        source = node.args[0]
        graph.erase_node(node)
        node = source


def _rename_outputs(program: ExportedProgram, renamed: dict[str, str]) -> None:
    for spec in program.graph_signature.output_specs:
        name = getattr(spec.arg, "name", None)
        if name in renamed:
            spec.arg.name = renamed[name]


def copy_objection(node: torch.fx.Node) -> Optional[str]:
    """None if ``as_strided`` node ``node`` is in the form the CPU's copy kernel runs (it reads
    a tensor whose storage is exactly its elements, in row-major order, and stays inside
    it): the form :func:`rewrite_as_strided` leaves. Else why not."""
    read, reason = strided_read(node)
    if read is None:
        return reason
    if read.owner is not node.args[0] or not _is_identity(read.owner_order):
        return (f"it reads the storage of '{read.owner.name}' through a view or in another order than row-major "
                "(kiln.passes.as_strided.rewrite_as_strided rewrites it)")
    return None


def rewrite_as_strided(program: ExportedProgram) -> int:
    """Rewrites every ``as_strided`` of ``program`` (in place) as described in the module
    docstring; returns how many it changed.

    Raises:
        UnsupportedOperatorError: an ``as_strided`` whose read Kiln cannot express (the
            node and the reason are in the message).
    """
    graph = program.graph_module.graph
    nodes = [n for n in graph.nodes if n.op == "call_function" and n.target is AS_STRIDED]
    # Every read is worked out on the original graph: an as_strided of an as_strided reads
    # the first one's storage owner, which the rewrite leaves in place.
    reads: list[tuple[torch.fx.Node, StridedRead]] = []
    for node in nodes:
        read, reason = strided_read(node)
        if read is None:
            raise UnsupportedOperatorError(f"node '{node.name}' ({OPERATOR}) cannot be compiled: {reason}",
                                           node=node.name, operator=OPERATOR)
        reads.append((node, read))
    renamed: dict[str, str] = {}
    changed = 0
    for node, read in reads:
        if read.order is None and copy_objection(node) is None:
            continue  # already the copy kernel's form
        if _is_no_op(node):
            result = node.args[0]  # nothing to say: users read the input (a quantize keeps its producer)
        else:
            with graph.inserting_before(node):
                order = read.order
                result = _as_views(graph, node, read, order) if order is not None else _as_copy(graph, node, read)
            renamed[node.name] = result.name
        node.replace_all_uses_with(result)
        source = node.args[0]
        graph.erase_node(node)
        _erase_unused_views(graph, source)
        changed += 1
        logger.debug("as_strided '%s' -> %s", node.name, result.name)
    if changed:
        _rename_outputs(program, renamed)
        program.graph_module.recompile()
    return changed
