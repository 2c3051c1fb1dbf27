"""The lowered form of one method: tensors and out-variant kernel calls in order.

This is what every stage after ``torch.export`` works on. The out-variant pass
builds it from a core-ATen graph, memory planning fills in ``TensorValue.allocation``
and ``MethodGraph.planned_buffer_sizes``, and the serializer turns it into an
``ExecutionPlan``. It holds no torch objects other than constant data, so planning
and emission can be tested on hand-made graphs.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional, Union

import numpy as np


class TensorRole(enum.Enum):
    """Where a tensor's memory comes from."""

    INPUT = "input"  # a user input of the method
    CONSTANT = "constant"  # parameter/buffer/lifted constant, data stored in the program
    ACTIVATION = "activation"  # written by a kernel call
    # A mutable buffer: planned memory that keeps its value from one execution to the
    # next, initialized from ``data`` (stored in the program) when the method is loaded.
    STATE = "state"


@dataclass(frozen=True)
class Allocation:
    """A planned tensor's place: ``offset`` bytes into planned buffer ``mem_id`` (1-based)."""

    mem_id: int
    offset: int


def align_up(value: int, alignment: int) -> int:
    """``value`` rounded up to a multiple of ``alignment`` (planned offsets, segments)."""
    return (value + alignment - 1) // alignment * alignment


@dataclass(eq=False)
class TensorValue:
    """One tensor of the method. Identity matters (``eq=False``): two tensors with
    equal shapes are still different values."""

    name: str
    dtype_code: int  # ScalarType code (c10 numbering), see kiln.serialize.scalar_types
    element_size: int
    shape: tuple[int, ...]
    role: TensorRole
    # Raw little-endian bytes of a constant, or a state's initial value, C-contiguous.
    # None unless role is CONSTANT or STATE.
    data: Optional[bytes] = None
    is_output: bool = False
    # True when ``shape`` holds upper bounds: the tensor may be smaller at run time
    # (a bounded dynamic shape); memory is planned for the bounds.
    dynamic: bool = False
    # Memory a planner should place this tensor in; a backend may move tensors to
    # another memory (e.g. fast SRAM) by changing this before planning.
    mem_id: int = 1
    allocation: Optional[Allocation] = None

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.numel * self.element_size

    @property
    def is_input(self) -> bool:
        return self.role is TensorRole.INPUT


@dataclass(eq=False)
class ScalarValue:
    """A number of the method that is not a constant: a user input (int, float or bool)
    or an int computed while the method runs (a symbolic size). Each gets a value slot
    of its own; ``value`` is what the slot holds before the method writes it (an
    input's example value). Identity matters, like a tensor's."""

    name: str
    value: Union[int, float, bool]


@dataclass(frozen=True)
class Null:
    """An absent optional argument (``None``)."""


@dataclass(frozen=True)
class Int:
    value: int


@dataclass(frozen=True)
class Double:
    value: float


@dataclass(frozen=True)
class Bool:
    value: bool


@dataclass(frozen=True)
class String:
    value: str


@dataclass(frozen=True)
class IntList:
    items: tuple[Union[int, ScalarValue], ...]  # a ScalarValue: a size known at run time


@dataclass(frozen=True)
class DoubleList:
    items: tuple[float, ...]


@dataclass(frozen=True)
class BoolList:
    items: tuple[bool, ...]


@dataclass(frozen=True, eq=False)
class TensorList:
    items: tuple[TensorValue, ...]


@dataclass(frozen=True, eq=False)
class OptionalTensorList:
    items: tuple[Optional[TensorValue], ...]


Argument = Union[
    TensorValue,
    ScalarValue,
    Null,
    Int,
    Double,
    Bool,
    String,
    IntList,
    DoubleList,
    BoolList,
    TensorList,
    OptionalTensorList,
]


@dataclass(eq=False)
class KernelCall:
    """Call of an out-variant operator. ``args`` follow ExecuTorch's convention:
    every schema argument in order (defaults materialized), the out arguments,
    then the return values again (one tensor, or a TensorList of the outs)."""

    operator: str  # full name, "aten::convolution.out"
    args: list[Argument]
    outputs: list[TensorValue]  # tensors this call writes
    source_node: str = ""  # FX node it was lowered from, for messages
    # Non-tensor values this call writes (the result of a symbolic size operator).
    scalar_outputs: list[ScalarValue] = field(default_factory=list)

    def tensors_read(self) -> list[TensorValue]:
        """Tensors this call reads (its non-out tensor arguments)."""
        written = {id(t) for t in self.outputs}
        seen: dict[int, TensorValue] = {}
        for arg in self.args:
            for tensor in tensors_in(arg):
                if id(tensor) not in written:
                    seen.setdefault(id(tensor), tensor)
        return list(seen.values())


def split_operator_name(full_name: str) -> tuple[str, str]:
    """``"aten::add.out"`` -> ``("aten::add", "out")``; no overload -> ``(name, "")``."""
    namespace, _, rest = full_name.partition("::")
    name, _, overload = rest.partition(".")
    return f"{namespace}::{name}", overload


@dataclass(frozen=True, eq=False)
class LoweredDelegate:
    """A subgraph a backend compiled: what a ``BackendDelegate`` entry of the program holds."""

    backend_id: str  # name the runtime looks the backend up by, e.g. "EthosUBackend"
    processed: bytes  # the backend's blob (stored in a segment of the .pte)
    compile_specs: tuple[tuple[str, bytes], ...] = ()
    name: str = ""  # subgraph name, for messages and reports


@dataclass(eq=False)
class DelegateCall:
    """Call of a lowered backend delegate. Its argument list follows ExecuTorch's
    convention: the delegate's inputs, then its outputs (no repeated return)."""

    delegate: LoweredDelegate
    inputs: list[TensorValue]
    outputs: list[TensorValue]
    source_node: str = ""  # FX node the delegate call was lowered from

    @property
    def args(self) -> list[Argument]:
        return [*self.inputs, *self.outputs]

    def tensors_read(self) -> list[TensorValue]:
        written = {id(t) for t in self.outputs}
        seen: dict[int, TensorValue] = {}
        for tensor in self.inputs:
            if id(tensor) not in written:
                seen.setdefault(id(tensor), tensor)
        return list(seen.values())


# One instruction of a method: an operator call or a delegate call.
Call = Union[KernelCall, DelegateCall]


def tensors_in(arg: Argument) -> list[TensorValue]:
    """Tensors referenced by one argument (lists included)."""
    if isinstance(arg, TensorValue):
        return [arg]
    if isinstance(arg, (TensorList, OptionalTensorList)):
        return [t for t in arg.items if t is not None]
    return []


# An input or output of a method: a tensor, or a number (int, float, bool).
MethodValue = Union[TensorValue, ScalarValue]


@dataclass(eq=False)
class MethodGraph:
    """A method ready for planning and emission."""

    name: str
    inputs: list[MethodValue]
    outputs: list[MethodValue]
    calls: list[Call]
    encoded_input_spec: str = ""
    encoded_output_spec: str = ""
    # Sizes per memory id; index 0 is unused and 0 (ExecutionPlan convention).
    planned_buffer_sizes: list[int] = field(default_factory=lambda: [0])

    @property
    def tensor_inputs(self) -> list[TensorValue]:
        return [value for value in self.inputs if isinstance(value, TensorValue)]

    @property
    def tensor_outputs(self) -> list[TensorValue]:
        return [value for value in self.outputs if isinstance(value, TensorValue)]

    def tensors(self) -> list[TensorValue]:
        """Every tensor once: inputs, then tensors in order of first use by a call,
        then outputs not produced by any call (e.g. an input returned as is)."""
        seen: dict[int, TensorValue] = {}
        for tensor in self.tensor_inputs:
            seen.setdefault(id(tensor), tensor)
        for call in self.calls:
            for arg in call.args:
                for tensor in tensors_in(arg):
                    seen.setdefault(id(tensor), tensor)
        for tensor in self.tensor_outputs:
            seen.setdefault(id(tensor), tensor)
        return list(seen.values())

    def states(self) -> list[TensorValue]:
        """The method's mutable buffers (role STATE), each once."""
        return [t for t in self.tensors() if t.role is TensorRole.STATE]
