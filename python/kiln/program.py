"""`kiln.Program`: a serialized ``.pte`` program and what it contains.

A Program is what :func:`kiln.export` returns, and what :meth:`Program.load`
reads back from any ``.pte`` file (Kiln's or ExecuTorch's). It needs neither torch
nor the runtime extension.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from kiln import PRODUCER_NAME, SerializationError
from kiln.serialize import program_generated as pte
from kiln.serialize.pte_file import read_pte, write_pte
from kiln.serialize.scalar_types import NAME_BY_CODE


def _text(value: object) -> str:
    """Strings unpacked from a buffer are bytes; strings we built are str."""
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class TensorInfo:
    """Type, shape and memory of one method input or output."""

    dtype: str
    shape: tuple[int, ...]
    planned: bool  # True if memory planning gave it memory; else the caller provides it

    def __str__(self) -> str:
        return f"{self.dtype}{list(self.shape)}{'' if self.planned else ' (caller memory)'}"


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

    @property
    def operators(self) -> list[str]:
        return list(self.operator_counts)


def _tensor_info(plan: pte.ExecutionPlanT, index: int) -> TensorInfo:
    value = plan.values[index]
    if value.valType != pte.KernelTypes.Tensor:
        return TensorInfo(dtype=f"<value kind {value.valType}>", shape=(), planned=True)
    tensor = value.val
    dtype = NAME_BY_CODE.get(int(tensor.scalarType), f"scalar_type_{tensor.scalarType}")
    sizes = tuple(int(s) for s in (tensor.sizes if tensor.sizes is not None else []))
    return TensorInfo(dtype=dtype, shape=sizes, planned=tensor.allocationInfo is not None)


def _method_info(plan: pte.ExecutionPlanT) -> MethodInfo:
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
        self._methods = [_method_info(plan) for plan in (program.executionPlan or [])]

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

    def save(self, path: Union[str, Path]) -> Path:
        """Write the ``.pte`` file to ``path`` (parent folders are created); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.to_bytes())
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
            lines.append("  operators (calls):")
            width = max((len(name) for name in info.operator_counts), default=0)
            for name, count in info.operator_counts.items():
                lines.append(f"    {name:<{width}}  {count}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Program(methods={self.method_names}, operators={len(self.operators)})"
