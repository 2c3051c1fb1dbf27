"""Recording ETDumps from Python: every ``execute`` of a method inside the ``with`` block.

    method = Runtime().load_program("mv2_u55.pte").load_method("forward")
    with kiln.devtools.record_etdump(method, intermediates=True) as recording:
        method.execute([x])
    recording.save("mv2.etdp", "mv2.bin")
    print(kiln.devtools.Inspector(recording.etdump, "mv2_u55.pte").table())
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional, Union

from kiln.devtools.etdump import Etdump

#: Defaults: ~40,000 events; every intermediate of one fp32 MobileNetV2 run.
DEFAULT_EVENT_BYTES = 8 << 20
DEFAULT_DEBUG_BYTES = 64 << 20


@dataclass
class EtdumpRecording:
    """What a :func:`record_etdump` block recorded (filled when the block ends)."""

    etdump_bytes: bytes = b""
    debug_buffer: bytes = b""
    recorded_events: int = 0
    dropped_events: int = 0
    dropped_values: int = 0

    @property
    def etdump(self) -> Etdump:
        return Etdump.from_bytes(self.etdump_bytes, self.debug_buffer or None, source="recorded ETDump")

    def save(self, path: Union[str, Path], debug_buffer_path: Union[str, Path, None] = None) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.etdump_bytes)
        if debug_buffer_path is not None:
            Path(debug_buffer_path).parent.mkdir(parents=True, exist_ok=True)
            Path(debug_buffer_path).write_bytes(self.debug_buffer)
        return path


@contextmanager
def record_etdump(method: Any, *, intermediates: bool = False, event_bytes: int = DEFAULT_EVENT_BYTES,
                  debug_bytes: Optional[int] = None) -> Iterator[EtdumpRecording]:
    """Records the executions of ``method`` (a :class:`kiln.runtime.Method`) in the block:
    each instruction and NPU operation (times in ns), kernel scratch use and, with
    ``intermediates``, every kernel's and NPU operation's output. A full buffer stops the
    recording; ``dropped_events`` / ``dropped_values`` say how much was lost."""
    from kiln import _runtime

    if debug_bytes is None:
        debug_bytes = DEFAULT_DEBUG_BYTES if intermediates else 0
    recorder = _runtime.EtdumpRecorder(method._handle, int(event_bytes), int(debug_bytes) if intermediates else 0)
    recording = EtdumpRecording()
    try:
        yield recording
    finally:
        recorder.stop()
        recording.etdump_bytes = bytes(recorder.etdump())
        recording.debug_buffer = bytes(recorder.debug_buffer())
        recording.recorded_events = int(recorder.recorded_events)
        recording.dropped_events = int(recorder.dropped_events)
        recording.dropped_values = int(recorder.dropped_values)
