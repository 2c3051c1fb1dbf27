"""What a method takes, returns and needs in memory, as plain dataclasses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kiln.serialize.scalar_types import NUMPY_BY_CPP_NAME

@dataclass(frozen=True)
class ValueSpec:
    """One input or output of a method. Non-tensor values have ``tag`` only."""

    tag: str
    shape: tuple[int, ...] = ()  # upper bounds when ``is_dynamic``
    scalar_type: str = ""
    dim_order: tuple[int, ...] = ()
    nbytes: int = 0  # at the declared (upper-bound) shape
    is_memory_planned: bool = False
    is_dynamic: bool = False  # a bounded dynamic shape: smaller tensors are accepted

    @property
    def is_tensor(self) -> bool:
        return self.tag == "Tensor"

    @property
    def dtype(self) -> np.dtype | None:
        """The numpy dtype of a tensor value (None if numpy has no such dtype)."""
        return NUMPY_BY_CPP_NAME.get(self.scalar_type)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ValueSpec:
        return cls(
            tag=raw["tag"],
            shape=tuple(raw.get("shape", ())),
            scalar_type=raw.get("scalar_type", ""),
            dim_order=tuple(raw.get("dim_order", ())),
            nbytes=int(raw.get("nbytes", 0)),
            is_memory_planned=bool(raw.get("is_memory_planned", False)),
            is_dynamic=bool(raw.get("is_dynamic", False)),
        )


@dataclass(frozen=True)
class StateSpec:
    """One piece of a method's state: a planned tensor kept from one execute to the next
    (a mutable buffer). Programs record no buffer names, so it is known by its index in
    the method's value table."""

    value_index: int
    shape: tuple[int, ...]
    scalar_type: str
    nbytes: int
    # False when the program stores no initial value (ExecuTorch's exporter without its
    # InitializedMutableBufferPass): the runtime starts it at zero at every load.
    has_initial_value: bool

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> StateSpec:
        return cls(
            value_index=int(raw["value_index"]),
            shape=tuple(raw.get("shape", ())),
            scalar_type=raw.get("scalar_type", ""),
            nbytes=int(raw.get("nbytes", 0)),
            has_initial_value=bool(raw["has_initial_value"]),
        )


@dataclass(frozen=True)
class MethodMeta:
    """A method's interface and memory needs, read from the program.

    The allocator figures (``method_allocator_used``, ``temp_allocator_*``,
    ``init_ms``) are only known for a loaded method; they are None otherwise.
    """

    name: str
    inputs: tuple[ValueSpec, ...]
    outputs: tuple[ValueSpec, ...]
    planned_buffer_sizes: tuple[int, ...]
    operators: tuple[str, ...]
    num_instructions: int
    num_backends: int
    method_allocator_size: int
    states: tuple[StateSpec, ...] = ()
    method_allocator_used: int | None = None
    temp_allocator_size: int | None = None
    temp_allocator_peak: int | None = None
    init_ms: float | None = None

    @property
    def planned_memory_bytes(self) -> int:
        return sum(self.planned_buffer_sizes)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> MethodMeta:
        init_ns = raw.get("init_ns")
        return cls(
            name=raw["name"],
            inputs=tuple(ValueSpec.from_dict(v) for v in raw["inputs"]),
            outputs=tuple(ValueSpec.from_dict(v) for v in raw["outputs"]),
            planned_buffer_sizes=tuple(int(s) for s in raw["planned_buffer_sizes"]),
            operators=tuple(raw["operators"]),
            num_instructions=int(raw["num_instructions"]),
            num_backends=int(raw["num_backends"]),
            method_allocator_size=int(raw["method_allocator_size"]),
            states=tuple(StateSpec.from_dict(s) for s in raw.get("states", ())),
            method_allocator_used=raw.get("method_allocator_used"),
            temp_allocator_size=raw.get("temp_allocator_size"),
            temp_allocator_peak=raw.get("temp_allocator_peak"),
            init_ms=None if init_ns is None else init_ns / 1e6,
        )
