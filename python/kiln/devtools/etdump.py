"""Reading ETDumps (``.etdp``): the size-prefixed ``ED00`` flatbuffers Kiln's runtime writes
(``kiln-run --etdump``, ``Method.execute(etdump=...)``, firmware through ``kiln-deploy
--etdump``) and ExecuTorch's runtime writes too.

    dump = Etdump.load("mv2.etdp", debug_buffer="mv2.bin")
    for run in dump.runs:
        for event in run.profile_events:
            print(event.instruction, event.name, event.duration)
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from kiln.devtools.errors import EtdumpError
from kiln.serialize.scalar_types import NUMPY_BY_CODE

FILE_IDENTIFIER = b"ED00"
_FOREIGN = {b"ET12": "a .pte program", b"BP08": "a bundled program"}


@dataclass(frozen=True)
class ProfileEvent:
    """A timed span: an instruction, a delegate operation (``delegate_index`` set) or a phase
    (``instruction`` -1, e.g. ``Method::execute``). Times are in the recorder's unit."""

    name: str
    chain: int
    instruction: int
    start: int
    end: int
    delegate_id: str = ""
    metadata: bytes = b""

    @property
    def duration(self) -> int:
        return self.end - self.start

    @property
    def is_delegate_operation(self) -> bool:
        return bool(self.delegate_id)

    @property
    def delegate_index(self) -> Optional[int]:
        """The operation's index within its delegate call (Kiln writes ``<name>#<index>``)."""
        head, sep, tail = self.delegate_id.rpartition("#")
        return int(tail) if sep and tail.isdigit() else None

    @property
    def counters(self) -> dict[str, Any]:
        """The delegate metadata as a dict when it is JSON (Kiln's NPU counters), else {}."""
        try:
            value = json.loads(self.metadata.decode())
        except (UnicodeDecodeError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class DebugEvent:
    """A logged value: its tensor's dtype code, sizes and offset in the debug buffer."""

    name: str
    chain: int
    instruction: int
    delegate_id: str
    scalar_type: int
    sizes: tuple[int, ...]
    offset: int
    is_output: bool = False
    data: Optional[np.ndarray] = None


@dataclass(frozen=True)
class AllocationEvent:
    allocator: str
    nbytes: int


Event = Union[ProfileEvent, DebugEvent, AllocationEvent]


@dataclass
class RunData:
    """Everything recorded for one run (``name`` "Execute" for a method execution)."""

    name: str
    bundled_input_index: int
    events: list[Event] = field(default_factory=list)

    @property
    def profile_events(self) -> list[ProfileEvent]:
        return [e for e in self.events if isinstance(e, ProfileEvent)]

    @property
    def debug_events(self) -> list[DebugEvent]:
        return [e for e in self.events if isinstance(e, DebugEvent)]

    @property
    def allocation_events(self) -> list[AllocationEvent]:
        return [e for e in self.events if isinstance(e, AllocationEvent)]


@dataclass
class Etdump:
    version: int
    runs: list[RunData]

    @classmethod
    def load(cls, path: Union[str, Path], debug_buffer: Union[str, Path, bytes, None] = None) -> "Etdump":
        """Reads an ETDump file; with ``debug_buffer`` (its path or bytes) logged tensors get data."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise EtdumpError(f"cannot read the ETDump {path}: {error.strerror or error}") from None
        if isinstance(debug_buffer, (str, Path)):
            debug_buffer = Path(debug_buffer).read_bytes()
        return cls.from_bytes(data, debug_buffer, source=str(path))

    @classmethod
    def from_bytes(cls, data: bytes, debug_buffer: Optional[bytes] = None, *, source: str = "ETDump") -> "Etdump":
        """Parses the bytes of an ETDump (raises :class:`EtdumpError` naming what is wrong)."""
        root = _unpack(bytes(data), source)
        runs = [_run(run, debug_buffer, source) for run in (root.runData or [])]
        return cls(version=int(root.version), runs=runs)


def _unpack(data: bytes, source: str) -> Any:
    from kiln.devtools import etdump_generated as schema

    if len(data) < 12:
        raise EtdumpError(f"{source}: {len(data)} bytes is too short for an ETDump (size prefix, root "
                          "offset and the 'ED00' identifier take 12)")
    identifier = data[8:12]
    if identifier != FILE_IDENTIFIER:
        plain = data[4:8]
        what = _FOREIGN.get(plain) or _FOREIGN.get(identifier)
        raise EtdumpError(f"{source}: not an ETDump (identifier {identifier!r}, expected b'ED00')"
                          + (f"; this is {what}" if what else ""))
    (size,) = struct.unpack_from("<I", data, 0)
    if size + 4 > len(data):
        raise EtdumpError(f"{source}: truncated: the size prefix says {size} bytes follow, "
                          f"the file has {len(data) - 4}")
    try:
        return schema.ETDumpT.InitFromPackedBuf(data[4:4 + size], 0)
    except Exception as error:  # the generated reader raises struct/index errors on corrupt data
        raise EtdumpError(f"{source}: corrupt ETDump flatbuffer ({type(error).__name__}: {error})") from None


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _tensor_data(tensor: Any, debug_buffer: Optional[bytes], source: str) -> Optional[np.ndarray]:
    dtype = NUMPY_BY_CODE.get(int(tensor.scalarType))
    if debug_buffer is None or dtype is None:
        return None
    sizes = [int(s) for s in (tensor.sizes if tensor.sizes is not None else [])]
    count = int(np.prod(sizes, dtype=np.int64)) if sizes else 1
    offset = int(tensor.offset)
    end = offset + count * np.dtype(dtype).itemsize
    if offset < 0 or end > len(debug_buffer):
        raise EtdumpError(f"{source}: a logged tensor lies at bytes [{offset}, {end}) of a "
                          f"{len(debug_buffer)}-byte debug buffer (is it the buffer of this run?)")
    return np.frombuffer(debug_buffer, dtype=dtype, count=count, offset=offset).reshape(sizes)


def _event(event: Any, allocators: list[str], debug_buffer: Optional[bytes], source: str) -> Optional[Event]:
    if event.profileEvent is not None:
        p = event.profileEvent
        metadata = bytes(bytearray(p.delegateDebugMetadata)) if p.delegateDebugMetadata is not None else b""
        delegate_id = _text(p.delegateDebugIdStr) or (str(p.delegateDebugIdInt) if p.delegateDebugIdInt >= 0 else "")
        return ProfileEvent(_text(p.name), int(p.chainIndex), int(p.instructionId), int(p.startTime),
                            int(p.endTime), delegate_id, metadata)
    if event.allocationEvent is not None:
        a = event.allocationEvent
        index = int(a.allocatorId)
        name = allocators[index] if 0 <= index < len(allocators) else f"allocator {index}"
        return AllocationEvent(name, int(a.allocationSize))
    if event.debugEvent is not None:
        d = event.debugEvent
        entry = d.debugEntry
        tensor = entry.tensor if entry is not None else None
        if tensor is None:
            return None  # scalars are not logged by Kiln
        delegate_id = _text(d.delegateDebugIdStr) or (str(d.delegateDebugIdInt) if d.delegateDebugIdInt >= 0 else "")
        is_output = bool(entry.output is not None and entry.output.boolVal)
        return DebugEvent(_text(d.name), int(d.chainIndex), int(d.instructionId), delegate_id,
                          int(tensor.scalarType), tuple(int(s) for s in (tensor.sizes if tensor.sizes is not None else [])),
                          int(tensor.offset), is_output, _tensor_data(tensor, debug_buffer, source))
    return None


def _run(run: Any, debug_buffer: Optional[bytes], source: str) -> RunData:
    allocators = [_text(a.name) for a in (run.allocators or [])]
    events = [_event(e, allocators, debug_buffer, source) for e in (run.events or [])]
    return RunData(_text(run.name), int(run.bundledInputIndex), [e for e in events if e is not None])
