"""Memory planning: lifetimes of non-constant tensors and their offsets in planned buffers.

See :func:`plan_memory` (plans a :class:`kiln.ir.MethodGraph` in place) and
:func:`place` (the greedy best-fit placement on its own).
"""

from kiln.memory.planner import (
    DEFAULT_ALIGNMENT,
    Lifetime,
    MemoryPlan,
    PlanRequest,
    align_up,
    compute_lifetimes,
    place,
    plan_memory,
)

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
