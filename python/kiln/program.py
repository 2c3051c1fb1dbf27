"""`kiln.Program`: a serialized ``.pte`` program and what it contains.

A Program is what :func:`kiln.export` returns, and what :meth:`Program.load`
reads back from any ``.pte`` file (Kiln's or ExecuTorch's). It needs neither torch
nor the runtime extension.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

from kiln import PRODUCER_NAME, SerializationError
from kiln.serialize import program_generated as pte
from kiln.serialize.pte_file import read_pte, write_pte
from kiln.serialize.scalar_types import ELEMENT_SIZE_BY_CODE, NAME_BY_CODE

if TYPE_CHECKING:
    from kiln.devtools.debug_info import DebugInfo
    from kiln.export.delegate import CompileReport


def _text(value: object) -> str:
    """Strings unpacked from a buffer are bytes; strings we built are str."""
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


# Non-tensor values, by flatbuffer value type.
_SCALAR_KINDS = {pte.KernelTypes.Int: "int", pte.KernelTypes.Double: "float", pte.KernelTypes.Bool: "bool"}


@dataclass(frozen=True)
class TensorInfo:
    """Type, shape and memory of one method input or output. A non-tensor value has
    dtype "int", "float" or "bool", shape () and ``is_tensor`` False."""

    dtype: str
    shape: tuple[int, ...]  # upper bounds when ``dynamic``
    planned: bool  # True if memory planning gave it memory; else the caller provides it
    dynamic: bool = False  # bounded dynamic shape: may be smaller at run time
    is_tensor: bool = True

    def __str__(self) -> str:
        if not self.is_tensor:
            return self.dtype
        bound = " (upper bound)" if self.dynamic else ""
        return f"{self.dtype}{list(self.shape)}{bound}{'' if self.planned else ' (caller memory)'}"


@dataclass(frozen=True)
class DelegateEntry:
    """One BackendDelegate of a method as the file stores it."""

    backend_id: str
    location: str  # "segment" or "inline"
    blob_bytes: int
    compile_specs: dict[str, bytes]


@dataclass(frozen=True)
class StateEntry:
    """One piece of a method's state: a planned tensor kept between executions (a mutable
    buffer), known by its index in the value table (programs record no buffer names)."""

    value_index: int
    tensor: TensorInfo
    nbytes: int
    has_initial_value: bool  # False: the runtime starts it at zero at every method load

    def __str__(self) -> str:
        origin = "initial value in the program" if self.has_initial_value else "no initial value: starts at zero"
        return f"value {self.value_index}: {self.tensor}, {self.nbytes:,} bytes, {origin}"


@dataclass(frozen=True)
class MethodInfo:
    """What one method of a program holds."""

    name: str
    operator_counts: dict[str, int]  # full operator name -> number of kernel calls
    num_values: int
    num_instructions: int
    planned_buffer_sizes: list[int]  # bytes of planned buffer for memory ids 1, 2, ...
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    delegates: tuple[DelegateEntry, ...] = ()
    states: tuple[StateEntry, ...] = ()  # mutable buffers, kept between executions

    @property
    def state_bytes(self) -> int:
        return sum(state.nbytes for state in self.states)

    @property
    def operators(self) -> list[str]:
        return list(self.operator_counts)


def _tensor_info(plan: pte.ExecutionPlanT, index: int) -> TensorInfo:
    value = plan.values[index]
    if value.valType in _SCALAR_KINDS:
        return TensorInfo(dtype=_SCALAR_KINDS[value.valType], shape=(), planned=True, is_tensor=False)
    if value.valType != pte.KernelTypes.Tensor:
        return TensorInfo(dtype=f"<value kind {value.valType}>", shape=(), planned=True, is_tensor=False)
    tensor = value.val
    dtype = NAME_BY_CODE.get(int(tensor.scalarType), f"scalar_type_{tensor.scalarType}")
    sizes = tuple(int(s) for s in (tensor.sizes if tensor.sizes is not None else []))
    dynamic = tensor.shapeDynamism == pte.TensorShapeDynamism.DYNAMIC_BOUND
    return TensorInfo(dtype=dtype, shape=sizes, planned=tensor.allocationInfo is not None, dynamic=dynamic)


# The in-place copy that writes a buffer's new value back into its planned tensor at the
# end of a method: [self, src, non_blocking, out] with out == self.
_STATE_WRITE_BACK = "aten::copy_"


def _planned_tensor(plan: pte.ExecutionPlanT, index: int) -> pte.TensorT | None:
    values = plan.values or []
    if not 0 <= index < len(values) or values[index].valType != pte.KernelTypes.Tensor:
        return None
    tensor = values[index].val
    return tensor if tensor.allocationInfo is not None else None


def _written_back_states(plan: pte.ExecutionPlanT) -> list[int]:
    """Value indices the write-back copies store into, in instruction order: planned
    tensors that are not method inputs (the rule of runtime/executor/method_state.h)."""
    operators = plan.operators or []
    inputs = {int(i) for i in (plan.inputs if plan.inputs is not None else [])}
    found: list[int] = []
    for instruction in (plan.chains[0].instructions or []) if plan.chains else []:
        if instruction.instrArgsType != pte.InstructionArguments.KernelCall:
            continue
        call = instruction.instrArgs
        op_index = int(call.opIndex)
        if not 0 <= op_index < len(operators) or _text(operators[op_index].name) != _STATE_WRITE_BACK:
            continue
        if _text(operators[op_index].overload) not in ("", "default"):
            continue
        args = [int(a) for a in (call.args if call.args is not None else [])]
        if len(args) < 2 or args[0] != args[-1] or args[0] in inputs or args[0] in found:
            continue
        if _planned_tensor(plan, args[0]) is not None:
            found.append(args[0])
    return found


def _states(plan: pte.ExecutionPlanT) -> tuple[StateEntry, ...]:
    """The method's state: planned tensors with an initial value in the program (value
    order), then those the program writes back but gives no initial value (the runtime
    starts them at zero) — the order of MethodMeta::state_meta."""
    def has_initial_value(index: int) -> bool:
        tensor = _planned_tensor(plan, index)
        return tensor is not None and bool(tensor.dataBufferIdx)

    with_data = [i for i in range(len(plan.values or [])) if has_initial_value(i)]
    without = [i for i in _written_back_states(plan) if not has_initial_value(i)]
    states = []
    for index in with_data + without:
        tensor = plan.values[index].val
        numel = 1
        for size in tensor.sizes if tensor.sizes is not None else []:
            numel *= int(size)
        nbytes = numel * ELEMENT_SIZE_BY_CODE.get(int(tensor.scalarType), 1)
        states.append(StateEntry(index, _tensor_info(plan, index), nbytes, bool(tensor.dataBufferIdx)))
    return tuple(states)


def _blob_size(program: pte.ProgramT, segments: list[bytes], reference: pte.BackendDelegateDataReferenceT) -> int:
    index = int(reference.index)
    if reference.location == pte.DataLocation.SEGMENT:
        return len(segments[index]) if index < len(segments) else 0
    inline = program.backendDelegateData or []
    data = inline[index].data if index < len(inline) else None
    return 0 if data is None else len(data)


def _delegate_entries(program: pte.ProgramT, segments: list[bytes], plan: pte.ExecutionPlanT) -> tuple[DelegateEntry, ...]:
    entries = []
    for delegate in plan.delegates or []:
        reference = delegate.processed
        specs = {_text(spec.key): bytes(bytearray(spec.value if spec.value is not None else []))
                 for spec in (delegate.compileSpecs or [])}
        entries.append(
            DelegateEntry(
                backend_id=_text(delegate.id),
                location="segment" if reference.location == pte.DataLocation.SEGMENT else "inline",
                blob_bytes=_blob_size(program, segments, reference),
                compile_specs=specs,
            )
        )
    return tuple(entries)


def _method_info(plan: pte.ExecutionPlanT, delegates: tuple[DelegateEntry, ...] = ()) -> MethodInfo:
    operators = [
        f"{_text(op.name)}.{_text(op.overload)}" if _text(op.overload) else _text(op.name)
        for op in (plan.operators or [])
    ]
    counts: collections.Counter[str] = collections.Counter()
    instructions = 0
    for chain in plan.chains or []:
        for instruction in chain.instructions or []:
            instructions += 1
            if instruction.instrArgsType == pte.InstructionArguments.KernelCall:
                counts[operators[instruction.instrArgs.opIndex]] += 1
            elif instruction.instrArgsType == pte.InstructionArguments.DelegateCall:
                delegate = plan.delegates[instruction.instrArgs.delegateIndex]
                counts[f"delegate:{_text(delegate.id)}"] += 1
    ordered = {name: counts[name] for name in operators if counts[name]}
    ordered.update({name: n for name, n in counts.items() if name not in ordered})
    sizes = [int(s) for s in (plan.nonConstBufferSizes if plan.nonConstBufferSizes is not None else [])]
    return MethodInfo(
        name=_text(plan.name),
        operator_counts=ordered,
        num_values=len(plan.values or []),
        num_instructions=instructions,
        planned_buffer_sizes=sizes[1:],
        inputs=[_tensor_info(plan, int(i)) for i in (plan.inputs if plan.inputs is not None else [])],
        outputs=[_tensor_info(plan, int(i)) for i in (plan.outputs if plan.outputs is not None else [])],
        delegates=delegates,
        states=_states(plan),
    )


class Program:
    """A compiled ``.pte`` program.

    Create one with :func:`kiln.export` or :meth:`Program.load`. Use
    :meth:`save` / :meth:`to_bytes` to get the file, :meth:`summary` for a
    human-readable report, and the properties for tools and tests.
    """

    def __init__(self, program: pte.ProgramT, segments: list[bytes], *, data: Optional[bytes] = None) -> None:
        """Wrap a flatc object-API program and its segment payloads.

        Most users never call this: see :func:`kiln.export` and :meth:`load`.
        """
        self._program = program
        self._segments = segments
        self._data = data
        self._methods = [
            _method_info(plan, _delegate_entries(program, segments, plan)) for plan in (program.executionPlan or [])
        ]
        # Set by kiln.export when it delegated parts of the program (partition
        # decisions, per-delegate NPU estimates); None for programs read from files.
        self.compile_report: Optional["CompileReport"] = None
        # The report of each delegated method, by method name (compile_report is the first).
        self.compile_reports: dict[str, "CompileReport"] = {}
        # Set by kiln.export: where each instruction came from in the model
        # (kiln.devtools.DebugInfo); save() writes it beside the .pte.
        self.debug_info: Optional["DebugInfo"] = None

    @classmethod
    def from_bytes(cls, data: bytes) -> "Program":
        """Parse a ``.pte`` file's bytes (raises :class:`kiln.SerializationError`)."""
        program, segments = read_pte(data)
        return cls(program, segments, data=bytes(data))

    @classmethod
    def load(cls, path: Union[str, Path]) -> "Program":
        """Read a ``.pte`` file from disk."""
        return cls.from_bytes(Path(path).read_bytes())

    def to_bytes(self) -> bytes:
        """The ``.pte`` file contents."""
        if self._data is None:
            self._data = write_pte(self._program, self._segments)
        return self._data

    def save(self, path: Union[str, Path], *, debug_info: bool = True) -> Path:
        """Write the ``.pte`` file to ``path`` (parent folders are created); returns the path.

        With ``debug_info`` (and a program from :func:`kiln.export`), also writes
        ``<name>.debug.json`` beside it: the model's module path of every instruction and
        NPU operation, for :class:`kiln.devtools.Inspector` and ``kiln-inspect``.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.to_bytes())
        if debug_info and self.debug_info is not None:
            self.debug_info.save(self.debug_info.path_for(path))
        return path

    @property
    def flatbuffer(self) -> pte.ProgramT:
        """The program as the flatc-generated object API (for lower-level tools)."""
        return self._program

    @property
    def method_names(self) -> list[str]:
        return [m.name for m in self._methods]

    @property
    def methods(self) -> list[MethodInfo]:
        return list(self._methods)

    def method(self, name: str) -> MethodInfo:
        for info in self._methods:
            if info.name == name:
                return info
        raise KeyError(f"program has no method {name!r}; it has {self.method_names}")

    @property
    def operators(self) -> list[str]:
        """Full names of the operators the program calls ("aten::add.out"), each once."""
        names: dict[str, None] = {}
        for info in self._methods:
            names.update(dict.fromkeys(info.operators))
        return list(names)

    @property
    def planned_buffer_sizes(self) -> list[int]:
        """Bytes of each planned buffer (memory ids 1, 2, ...) of the first method."""
        return list(self._methods[0].planned_buffer_sizes) if self._methods else []

    @property
    def producer(self) -> Optional[str]:
        """``"kiln <version>"`` if Kiln wrote this program, else None.

        Read from the String value Kiln appends to each execution plan (the
        format has no metadata field; see kiln.serialize.emitter).
        """
        for plan in self._program.executionPlan or []:
            values = plan.values or []
            if values and values[-1].valType == pte.KernelTypes.String:
                text = _text(values[-1].val.stringVal)
                if text.startswith(f"{PRODUCER_NAME} "):
                    return text
        return None

    @property
    def constant_bytes(self) -> int:
        """Bytes of constant tensor data (constant segment or inline buffers)."""
        segment = self._program.constantSegment
        offsets = segment.offsets if segment is not None else None
        if offsets is not None and len(offsets) > 1:
            index = int(segment.segmentIndex)
            if index >= len(self._segments):
                raise SerializationError(f"constant segment index {index} has no segment")
            return len(self._segments[index])
        return sum(len(b.storage if b.storage is not None else []) for b in (self._program.constantBuffer or []))

    def summary(self) -> str:
        """Human-readable report: methods, IO, operators with call counts, memory."""
        lines = [
            f"program: {len(self._methods)} method(s), {len(self.to_bytes()):,} bytes, "
            f"constants {self.constant_bytes:,} bytes, producer {self.producer or 'unknown'}"
        ]
        for info in self._methods:
            lines.append(
                f"method '{info.name}': {info.num_instructions} instructions, {info.num_values} values"
            )
            lines.append(f"  inputs:  {', '.join(map(str, info.inputs)) or '-'}")
            lines.append(f"  outputs: {', '.join(map(str, info.outputs)) or '-'}")
            for mem_id, size in enumerate(info.planned_buffer_sizes, start=1):
                lines.append(f"  planned memory id {mem_id}: {size:,} bytes")
            if info.states:
                lines.append(f"  state (mutable buffers, kept between calls): {info.state_bytes:,} bytes")
                lines.extend(f"    {state}" for state in info.states)
            lines.append("  operators (calls):")
            width = max((len(name) for name in info.operator_counts), default=0)
            for name, count in info.operator_counts.items():
                lines.append(f"    {name:<{width}}  {count}")
            if info.delegates and self.compile_report is None:
                for index, entry in enumerate(info.delegates):
                    lines.append(
                        f"  delegate {index}: {entry.backend_id}, {entry.blob_bytes:,} bytes ({entry.location}), "
                        f"compile specs {', '.join(entry.compile_specs) or '-'}"
                    )
        for method_name, report in (self.compile_reports or {"": self.compile_report}).items():
            if report is None:
                continue
            if len(self.compile_reports) > 1:
                lines.append(f"method '{method_name}':")
            lines.extend(_delegation_summary(report))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Program(methods={self.method_names}, operators={len(self.operators)})"


def _bytes(value: Optional[int]) -> str:
    return "?" if value is None else f"{value:,} B"


def _delegation_summary(report: "CompileReport") -> list[str]:
    """Per delegate: backend, TOSA ops, NPU cycles, SRAM/scratch, flash, transposes; totals."""
    lines = []
    for info in report.delegates:
        d = info.report
        if hasattr(d, "summary_lines"):  # a backend that describes its own delegates (XNNPACK)
            lines += d.summary_lines()
            continue
        ops = ", ".join(f"{name} {n}" for name, n in sorted(d.tosa_ops.items(), key=lambda kv: -kv[1]))
        flash = _bytes(d.flash_bytes)
        if d.weight_bytes is not None and d.command_stream_bytes is not None:
            flash += f" (weights {d.weight_bytes:,} + command stream {d.command_stream_bytes:,})"
        lines += [
            f"delegate {info.name}: {d.backend_id} on {d.target}, blob {d.blob_bytes:,} B",
            f"  TOSA ops: {d.num_tosa_ops} ({ops})",
            f"  NPU cycles (Vela estimate): {'?' if d.npu_cycles is None else f'{d.npu_cycles:,}'}",
            f"  virtual NPU work memory: {_bytes(getattr(d, 'npu_work_memory_bytes', None))}",
            f"  SRAM: {_bytes(d.sram_bytes)}, scratch: {_bytes(d.scratch_bytes)}, flash: {flash}",
            f"  boundary transposes: {d.transpose_bytes:,} B",
        ]
    partition = report.partition_report
    lines.append(
        f"nodes: {partition.delegated_nodes} delegated in {len(report.delegates)} delegate(s), "
        f"{partition.cpu_nodes} on the CPU"
    )
    return lines
