"""Memory planning: give every non-constant tensor an offset in a planned buffer.

A tensor is live from the instruction that writes it (or from the start, for
inputs) to the last instruction that reads it (or to the end, for outputs).
Tensors whose live ranges overlap must not overlap in memory. Placement is
greedy best-fit: the largest tensors are placed first, each into the smallest
gap between already placed, simultaneously live tensors that fits it.

Each tensor carries a ``mem_id`` (default 1); every memory id is planned
separately, so a backend can move tensors to another memory before planning.

A dynamic tensor is planned for its upper-bound shape (``TensorValue.shape`` holds
the bounds), so it fits whatever size it takes at run time. A mutable buffer (role
STATE) is live for the whole method: its bytes carry its value from one execution
to the next, so no other tensor may ever use them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kiln import MemoryPlanningError
from kiln.ir.method_graph import Allocation, MethodGraph, TensorRole, TensorValue, align_up

logger = logging.getLogger(__name__)

DEFAULT_ALIGNMENT = 16


@dataclass(frozen=True)
class Lifetime:
    """Inclusive range of instruction indices during which a tensor must keep its bytes."""

    first: int
    last: int

    def overlaps(self, other: "Lifetime") -> bool:
        return self.first <= other.last and other.first <= self.last


@dataclass
class PlanRequest:
    """One tensor to place: size in bytes, live range, and memory id."""

    size: int
    lifetime: Lifetime
    mem_id: int = 1


@dataclass
class MemoryPlan:
    """Result of planning a method."""

    # buffer_sizes[mem_id] in bytes; index 0 is unused and 0.
    buffer_sizes: list[int]
    planned: int  # number of tensors given an allocation
    unplanned_io: int  # inputs/outputs left to the caller
    # Sum of the aligned sizes of the planned tensors, i.e. the size without reuse.
    total_tensor_bytes: int
    lifetimes: dict[int, Lifetime] = field(default_factory=dict)  # id(tensor) -> lifetime


def place(requests: list[PlanRequest], alignment: int = DEFAULT_ALIGNMENT) -> tuple[list[int], list[int]]:
    """Greedy best-fit placement.

    Returns (offset of each request, buffer size per mem id with index 0 unused).
    Two requests with the same mem id and overlapping lifetimes never overlap in
    memory; every offset is a multiple of ``alignment``.
    """
    if alignment <= 0 or alignment & (alignment - 1):
        raise MemoryPlanningError(f"alignment must be a power of two, got {alignment}")
    offsets = [0] * len(requests)
    max_mem_id = max((r.mem_id for r in requests), default=0)
    sizes = [0] * (max_mem_id + 1)
    by_memory: dict[int, list[int]] = {}
    for index, request in enumerate(requests):
        if request.mem_id < 1:
            raise MemoryPlanningError(f"tensor {index} has mem_id {request.mem_id}; ids start at 1")
        if request.lifetime.first > request.lifetime.last or request.size < 0:
            raise MemoryPlanningError(f"tensor {index} has an invalid request {request}")
        by_memory.setdefault(request.mem_id, []).append(index)
    for mem_id, indices in by_memory.items():
        sizes[mem_id] = _place_in_one_memory(requests, indices, offsets, alignment)
    return offsets, sizes


def _place_in_one_memory(
    requests: list[PlanRequest], indices: list[int], offsets: list[int], alignment: int
) -> int:
    # Largest first; ties by earlier start so the result does not depend on input order.
    order = sorted(indices, key=lambda i: (-requests[i].size, requests[i].lifetime.first, i))
    placed: list[int] = []
    end_of_buffer = 0
    for index in order:
        request = requests[index]
        size = align_up(request.size, alignment)
        if size == 0:
            offsets[index] = 0  # holds no bytes, cannot collide
            continue
        # Occupied ranges of tensors live at the same time, sorted by offset.
        busy = sorted(
            (offsets[p], offsets[p] + align_up(requests[p].size, alignment))
            for p in placed
            if requests[p].lifetime.overlaps(request.lifetime)
        )
        offsets[index] = _best_fit(busy, size)
        placed.append(index)
        end_of_buffer = max(end_of_buffer, offsets[index] + size)
    return end_of_buffer


def _best_fit(busy: list[tuple[int, int]], size: int) -> int:
    """Start of the smallest free gap that holds ``size`` bytes (or the end)."""
    best_start, best_gap = None, None
    cursor = 0
    for start, end in busy:
        gap = start - cursor
        if gap >= size and (best_gap is None or gap < best_gap):
            best_start, best_gap = cursor, gap
        cursor = max(cursor, end)
    return cursor if best_start is None else best_start


def compute_lifetimes(method: MethodGraph) -> dict[int, Lifetime]:
    """Live range of every non-constant tensor, keyed by ``id(tensor)``."""
    end = max(len(method.calls) - 1, 0)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for tensor in method.tensor_inputs:
        first[id(tensor)] = 0
        last[id(tensor)] = 0
    for step, call in enumerate(method.calls):
        for tensor in call.tensors_read():
            if tensor.role is not TensorRole.CONSTANT:
                first.setdefault(id(tensor), step)
                last[id(tensor)] = step
        for tensor in call.outputs:
            first.setdefault(id(tensor), step)
            last[id(tensor)] = max(last.get(id(tensor), step), step)
    for tensor in method.tensor_outputs:
        if tensor.role is not TensorRole.CONSTANT:
            first.setdefault(id(tensor), 0)
            last[id(tensor)] = end
    for tensor in method.states():
        first[id(tensor)], last[id(tensor)] = 0, end
    return {key: Lifetime(first[key], last[key]) for key in first}


def _is_planned(tensor: TensorValue, plan_inputs: bool, plan_outputs: bool) -> bool:
    if tensor.role is TensorRole.CONSTANT:
        return False
    if tensor.role is TensorRole.STATE:
        return True  # its value lives in the planned memory between executions
    # A tensor that is both an input and an output is planned only if both are.
    if tensor.is_input and not plan_inputs:
        return False
    if tensor.is_output and not plan_outputs:
        return False
    return True


def plan_memory(
    method: MethodGraph,
    *,
    plan_inputs: bool = True,
    plan_outputs: bool = True,
    alignment: int = DEFAULT_ALIGNMENT,
) -> MemoryPlan:
    """Assign ``allocation`` to every planned tensor of ``method`` and set
    ``method.planned_buffer_sizes``.

    Args:
        method: the lowered method; tensors' ``mem_id`` choose the buffer.
        plan_inputs: if False, inputs get no allocation and the caller provides
            their memory at execution time.
        plan_outputs: likewise for outputs. A tensor that is both an input and an
            output is planned only when both options are True.
        alignment: byte alignment of every offset (16 by default).

    Returns:
        The :class:`MemoryPlan` with buffer sizes and statistics.
    """
    lifetimes = compute_lifetimes(method)
    planned: list[TensorValue] = []
    unplanned_io = 0
    for tensor in method.tensors():
        tensor.allocation = None
        if _is_planned(tensor, plan_inputs, plan_outputs):
            planned.append(tensor)
        elif tensor.role is not TensorRole.CONSTANT:
            unplanned_io += 1
    requests = [PlanRequest(t.nbytes, lifetimes[id(t)], t.mem_id) for t in planned]
    offsets, sizes = place(requests, alignment)
    for tensor, offset in zip(planned, offsets):
        tensor.allocation = Allocation(tensor.mem_id, offset)
    method.planned_buffer_sizes = sizes if len(sizes) > 1 else [0]
    plan = MemoryPlan(
        buffer_sizes=method.planned_buffer_sizes,
        planned=len(planned),
        unplanned_io=unplanned_io,
        total_tensor_bytes=sum(align_up(r.size, alignment) for r in requests),
        lifetimes=lifetimes,
    )
    logger.debug(
        "planned %d tensors of %s into %s bytes (%d bytes without reuse)",
        plan.planned, method.name, plan.buffer_sizes[1:], plan.total_tensor_bytes,
    )
    return plan


__all__ = [
    "DEFAULT_ALIGNMENT",
    "Lifetime",
    "MemoryPlan",
    "PlanRequest",
    "align_up",
    "compute_lifetimes",
    "place",
    "plan_memory",
]
