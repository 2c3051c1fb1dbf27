"""Emit planned :class:`MethodGraph` objects into the flatc-generated object API.

Values are emitted in the order the method uses them: inputs first, then each
call's arguments. Constant scalars and integer lists are shared between calls (the
runtime never writes them); numbers the method takes as input or computes (a
symbolic size) get a value slot each. Constant tensor data goes to a
:class:`ConstantPool` that becomes the program's constant segment (segment 0); each
delegate's blob goes to a segment of its own after it (``DataLocation.SEGMENT``,
identical blobs shared), as ExecuTorch does when it extracts delegate segments. The
initial values of mutable buffers go to one more segment, the program's mutable data
segment: a state tensor is planned and names its initial value by its entry there.
Tensors with bounded dynamic shapes are written with their upper bounds and
``DYNAMIC_BOUND``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Callable, Hashable

import numpy as np

from kiln import PRODUCER_NAME, SerializationError, __version__
from kiln.ir.method_graph import (
    Argument,
    Bool,
    BoolList,
    DelegateCall,
    Double,
    DoubleList,
    Int,
    IntList,
    MethodGraph,
    LoweredDelegate,
    Null,
    OptionalTensorList,
    ScalarValue,
    String,
    TensorList,
    TensorRole,
    TensorValue,
    align_up,
    split_operator_name,
)
from kiln.serialize import program_generated as pte

CONSTANT_ALIGNMENT = 16
_UINT32_MASK = (1 << 32) - 1


@dataclass
class ConstantPool:
    """Constant tensor bytes, deduplicated by content.

    Index 0 is reserved (a tensor with ``data_buffer_idx == 0`` is not constant);
    every tensor starts at a multiple of ``alignment`` inside the segment.
    """

    alignment: int = CONSTANT_ALIGNMENT
    _blobs: list[bytes] = field(default_factory=list)
    _index_by_content: dict[bytes, int] = field(default_factory=dict)

    def add(self, data: bytes) -> int:
        """Buffer index of ``data`` (>= 1), adding it if not already present."""
        index = self._index_by_content.get(data)
        if index is None:
            self._blobs.append(data)
            index = len(self._blobs)
            self._index_by_content[data] = index
        return index

    def __len__(self) -> int:
        return len(self._blobs)

    def segment(self) -> tuple[bytes, list[int]]:
        """(segment bytes, offsets) with offsets[0] = 0 for the reserved entry."""
        offsets = [0]
        parts: list[bytes] = []
        cursor = 0
        for blob in self._blobs:
            start = align_up(cursor, self.alignment)
            parts.append(b"\x00" * (start - cursor))
            parts.append(blob)
            offsets.append(start)
            cursor = start + len(blob)
        return b"".join(parts), offsets


@dataclass
class DelegateSegments:
    """Delegate blobs, one segment each, deduplicated by content.

    ``first_index`` is the program segment index of the first blob (the constant
    segment comes before them).
    """

    first_index: int = 1
    blobs: list[bytes] = field(default_factory=list)
    _index_by_content: dict[bytes, int] = field(default_factory=dict)

    def add(self, blob: bytes) -> int:
        """Program segment index of ``blob``."""
        index = self._index_by_content.get(blob)
        if index is None:
            self.blobs.append(blob)
            index = self.first_index + len(self.blobs) - 1
            self._index_by_content[blob] = index
        return index


def producer_tag() -> str:
    """Text of the producer value: ``"kiln <version>"``."""
    return f"{PRODUCER_NAME} {__version__}"


def _producer_string() -> pte.StringT:
    # The schema has no metadata field. An unreferenced String value is the one
    # place that both runtimes accept (ExecuTorch 1.5.1 loads and runs such
    # programs); it is always the last value of an execution plan.
    value = pte.StringT()
    value.stringVal = producer_tag()
    return value


def _evalue(kind: int, value: object) -> pte.EValueT:
    evalue = pte.EValueT()
    evalue.valType = kind
    evalue.val = value
    return evalue


class _PlanEmitter:
    """Builds one ExecutionPlanT."""

    def __init__(
        self, method: MethodGraph, constants: ConstantPool, blobs: DelegateSegments, states: ConstantPool
    ) -> None:
        self.method = method
        self.constants = constants
        self.blobs = blobs
        self.states = states
        self.delegates: list[pte.BackendDelegateT] = []
        self.values: list[pte.EValueT] = []
        self.tensor_index: dict[int, int] = {}
        self.shared_index: dict[Hashable, int] = {}
        self.operator_index: dict[str, int] = {}
        self.operators: list[pte.OperatorT] = []

    def _append(self, evalue: pte.EValueT) -> int:
        self.values.append(evalue)
        return len(self.values) - 1

    def _shared(self, key: Hashable, make: Callable[[], pte.EValueT]) -> int:
        index = self.shared_index.get(key)
        if index is None:
            index = self._append(make())
            self.shared_index[key] = index
        return index

    def tensor(self, tensor: TensorValue) -> int:
        index = self.tensor_index.get(id(tensor))
        if index is not None:
            return index
        value = pte.TensorT()
        value.scalarType = tensor.dtype_code
        value.storageOffset = 0
        value.sizes = list(tensor.shape)
        value.dimOrder = list(range(len(tensor.shape)))
        value.requiresGrad = False
        value.layout = 0
        value.shapeDynamism = (
            pte.TensorShapeDynamism.DYNAMIC_BOUND if tensor.dynamic else pte.TensorShapeDynamism.STATIC
        )
        value.dataBufferIdx = 0
        if tensor.role is TensorRole.STATE:
            if tensor.allocation is None or tensor.data is None or len(tensor.data) != tensor.nbytes:
                raise SerializationError(
                    f"state '{tensor.name}' of method '{self.method.name}' needs planned memory and "
                    f"{tensor.nbytes} bytes of initial data"
                )
            value.allocationInfo = _allocation_details(tensor)
            # Copied into the planned bytes at load: equal initial values can share an entry.
            value.dataBufferIdx = self.states.add(tensor.data)
        elif tensor.role is TensorRole.CONSTANT:
            if tensor.data is None or len(tensor.data) != tensor.nbytes:
                raise SerializationError(
                    f"constant '{tensor.name}' has {0 if tensor.data is None else len(tensor.data)} "
                    f"bytes of data, expected {tensor.nbytes}"
                )
            value.dataBufferIdx = self.constants.add(tensor.data)
        elif tensor.allocation is not None:
            value.allocationInfo = _allocation_details(tensor)
        elif not (tensor.is_input or tensor.is_output):
            raise SerializationError(
                f"tensor '{tensor.name}' of method '{self.method.name}' has no memory: it is "
                "neither planned, constant nor an input/output (run kiln.memory.plan_memory first)"
            )
        index = self._append(_evalue(pte.KernelTypes.Tensor, value))
        self.tensor_index[id(tensor)] = index
        return index

    def scalar(self, scalar: ScalarValue) -> int:
        """The value slot of a number the method takes or computes (never shared)."""
        index = self.tensor_index.get(id(scalar))
        if index is not None:
            return index
        number = scalar.value
        if isinstance(number, bool):
            value, kind = pte.BoolT(), pte.KernelTypes.Bool
            value.boolVal = number
        elif isinstance(number, int):
            value, kind = pte.IntT(), pte.KernelTypes.Int
            value.intVal = number
        else:
            value, kind = pte.DoubleT(), pte.KernelTypes.Double
            value.doubleVal = float(number)
        index = self._append(_evalue(kind, value))
        self.tensor_index[id(scalar)] = index
        return index

    def value(self, value: TensorValue | ScalarValue) -> int:
        return self.scalar(value) if isinstance(value, ScalarValue) else self.tensor(value)

    def _int(self, number: int) -> int:
        def make() -> pte.EValueT:
            value = pte.IntT()
            value.intVal = number
            return _evalue(pte.KernelTypes.Int, value)

        return self._shared(("Int", number), make)

    def argument(self, arg: Argument) -> int:  # noqa: C901 - one branch per value kind
        if isinstance(arg, TensorValue):
            return self.tensor(arg)
        if isinstance(arg, ScalarValue):
            return self.scalar(arg)
        if isinstance(arg, Null):
            return self._shared(("Null",), lambda: _evalue(pte.KernelTypes.Null, pte.NullT()))
        if isinstance(arg, Int):
            return self._int(arg.value)
        if isinstance(arg, Bool):
            value = pte.BoolT()
            value.boolVal = arg.value
            return self._shared(("Bool", arg.value), lambda: _evalue(pte.KernelTypes.Bool, value))
        if isinstance(arg, Double):
            value = pte.DoubleT()
            value.doubleVal = arg.value
            key = ("Double", struct.pack("<d", arg.value))
            return self._shared(key, lambda: _evalue(pte.KernelTypes.Double, value))
        if isinstance(arg, String):
            value = pte.StringT()
            value.stringVal = arg.value
            return self._append(_evalue(pte.KernelTypes.String, value))
        if isinstance(arg, IntList):
            # Items are indices of Int values (the runtime boxes int lists).
            items = [self.scalar(item) if isinstance(item, ScalarValue) else self._int(item) for item in arg.items]
            value = pte.IntListT()
            value.items = items
            return self._shared(("IntList", arg.items), lambda: _evalue(pte.KernelTypes.IntList, value))
        if isinstance(arg, DoubleList):
            value = pte.DoubleListT()
            value.items = list(arg.items)
            return self._append(_evalue(pte.KernelTypes.DoubleList, value))
        if isinstance(arg, BoolList):
            value = pte.BoolListT()
            value.items = list(arg.items)
            return self._append(_evalue(pte.KernelTypes.BoolList, value))
        if isinstance(arg, TensorList):
            value = pte.TensorListT()
            value.items = [self.tensor(t) for t in arg.items]
            return self._append(_evalue(pte.KernelTypes.TensorList, value))
        if isinstance(arg, OptionalTensorList):
            value = pte.OptionalTensorListT()
            value.items = [self.argument(Null()) if t is None else self.tensor(t) for t in arg.items]
            return self._append(_evalue(pte.KernelTypes.OptionalTensorList, value))
        raise SerializationError(f"cannot emit argument {arg!r}")

    def operator(self, full_name: str) -> int:
        index = self.operator_index.get(full_name)
        if index is None:
            name, overload = split_operator_name(full_name)
            op = pte.OperatorT()
            op.name = name
            op.overload = overload
            self.operators.append(op)
            index = len(self.operators) - 1
            self.operator_index[full_name] = index
        return index

    def delegate(self, lowered: LoweredDelegate) -> int:
        """Index of a new BackendDelegate entry for ``lowered`` (one per call)."""
        reference = pte.BackendDelegateDataReferenceT()
        reference.location = pte.DataLocation.SEGMENT
        reference.index = self.blobs.add(lowered.processed)
        specs = []
        for key, value in lowered.compile_specs:
            spec = pte.CompileSpecT()
            spec.key = key
            spec.value = np.frombuffer(bytes(value), dtype=np.uint8)
            specs.append(spec)
        delegate = pte.BackendDelegateT()
        delegate.id = lowered.backend_id
        delegate.processed = reference
        delegate.compileSpecs = specs
        self.delegates.append(delegate)
        return len(self.delegates) - 1

    def emit(self) -> pte.ExecutionPlanT:
        method = self.method
        inputs = [self.value(v) for v in method.inputs]
        instructions: list[pte.InstructionT] = []
        for call in method.calls:
            instruction = pte.InstructionT()
            if isinstance(call, DelegateCall):
                delegate_call = pte.DelegateCallT()
                delegate_call.delegateIndex = self.delegate(call.delegate)
                delegate_call.args = [self.tensor(t) for t in call.args]
                instruction.instrArgsType = pte.InstructionArguments.DelegateCall
                instruction.instrArgs = delegate_call
            else:
                kernel_call = pte.KernelCallT()
                kernel_call.opIndex = self.operator(call.operator)
                kernel_call.args = [self.argument(arg) for arg in call.args]
                instruction.instrArgsType = pte.InstructionArguments.KernelCall
                instruction.instrArgs = kernel_call
            instructions.append(instruction)
        outputs = [self.value(v) for v in method.outputs]
        self._append(_evalue(pte.KernelTypes.String, _producer_string()))

        chain = pte.ChainT()
        chain.inputs = []
        chain.outputs = []
        chain.instructions = instructions
        container = pte.ContainerMetadataT()
        container.encodedInpStr = method.encoded_input_spec
        container.encodedOutStr = method.encoded_output_spec

        plan = pte.ExecutionPlanT()
        plan.name = method.name
        plan.containerMetaType = container
        plan.values = self.values
        plan.inputs = inputs
        plan.outputs = outputs
        plan.chains = [chain]
        plan.operators = self.operators
        plan.delegates = self.delegates
        plan.nonConstBufferSizes = list(method.planned_buffer_sizes) or [0]
        return plan


def _allocation_details(tensor: TensorValue) -> pte.AllocationDetailsT:
    assert tensor.allocation is not None
    details = pte.AllocationDetailsT()
    details.memoryId = tensor.allocation.mem_id
    details.memoryOffsetLow = tensor.allocation.offset & _UINT32_MASK
    details.memoryOffsetHigh = tensor.allocation.offset >> 32
    return details


def emit_program(methods: list[MethodGraph]) -> tuple[pte.ProgramT, list[bytes]]:
    """Build the ProgramT for planned methods.

    Returns:
        (program, segments): ``segments[0]`` is the constant segment that
        ``program.constantSegment`` refers to, then one segment per distinct
        delegate blob, then (if a method has state) the mutable data segment that
        ``program.mutableDataSegments[0]`` refers to; ``program.segments`` is filled
        in by :func:`kiln.serialize.pte_file.write_pte`.
    """
    names = [m.name for m in methods]
    if len(set(names)) != len(names):
        raise SerializationError(f"method names must be unique, got {names}")
    constants = ConstantPool()
    blobs = DelegateSegments(first_index=1)
    states = ConstantPool()
    plans = [_PlanEmitter(method, constants, blobs, states).emit() for method in methods]
    segment_data, offsets = constants.segment()
    segments = [segment_data, *blobs.blobs]

    constant_segment = pte.SubsegmentOffsetsT()
    constant_segment.segmentIndex = 0
    constant_segment.offsets = offsets

    program = pte.ProgramT()
    program.version = 0
    program.executionPlan = plans
    program.constantBuffer = []
    program.backendDelegateData = []
    program.segments = []
    program.constantSegment = constant_segment
    if len(states):
        state_data, state_offsets = states.segment()
        mutable_segment = pte.SubsegmentOffsetsT()
        mutable_segment.segmentIndex = len(segments)
        mutable_segment.offsets = state_offsets
        program.mutableDataSegments = [mutable_segment]
        segments.append(state_data)
    return program, segments
