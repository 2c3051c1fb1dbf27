"""``Inspector``: an ETDump mapped back to the model — one row per instruction and per NPU
operation, with the PyTorch module path and operator that produced it.

    inspector = Inspector("mv2.etdp", "mv2_u55.pte")   # reads mv2_u55.debug.json beside it
    print(inspector.table())
    inspector.write_tsv("profile.tsv")

Rows with the same instruction (and NPU operation) in several runs are one row with the
time of each run; times are in the recorder's unit ("ns" from kiln-run and the Python
runtime, "ticks" from firmware).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from kiln.devtools.debug_info import DebugInfo, InstructionInfo, MethodDebugInfo, NodeInfo, NpuLayerInfo
from kiln.devtools.etdump import AllocationEvent, DebugEvent, Etdump, ProfileEvent

_EXECUTE_EVENT = "Method::execute"


@dataclass
class InspectorRow:
    """One instruction, or one NPU operation of a delegate call, over every run recorded."""

    instruction: int
    operator: str  # "aten::convolution.out", the backend id, or the NPU operation's kind
    module_path: str = ""
    module_type: str = ""
    node: str = ""
    npu_operation: str = ""  # "conv#4" for an operation of a delegate call
    npu_layer: str = ""  # Vela's name of the layer the operation belongs to
    durations: list[int] = field(default_factory=list)
    macs: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    vela_cycles: int = 0
    npu_cycles: int = 0  # the virtual NPU device's estimate for this operation (0: none)
    scratch_bytes: int = 0
    source: str = ""

    @property
    def is_npu_operation(self) -> bool:
        return bool(self.npu_operation)

    @property
    def average(self) -> float:
        return statistics.fmean(self.durations) if self.durations else 0.0

    @property
    def median(self) -> float:
        return float(statistics.median(self.durations)) if self.durations else 0.0


class Inspector:
    """An ETDump, optionally with the program it ran (for module paths and NPU layers).

    Args:
        etdump: an ETDump file, its bytes, or an :class:`Etdump`.
        program: the ``.pte``/``.bpte`` path (its ``.debug.json`` beside it is read) or a
            :class:`kiln.Program` from :func:`kiln.export`; None: names come from the dump.
        debug_info: explicit debug info (overrides the program's).
        method: the method the dump recorded (default: the first with debug info).
        time_unit: the dump's time unit, for headers ("ns" host, "ticks" firmware).
        debug_buffer: the debug buffer recorded with the dump, for intermediate values.
    """

    def __init__(self, etdump: Union[str, Path, bytes, Etdump], program: Any = None, *,
                 debug_info: Optional[DebugInfo] = None, method: Optional[str] = None,
                 time_unit: str = "ns", debug_buffer: Union[str, Path, bytes, None] = None) -> None:
        if isinstance(etdump, Etdump):
            self.etdump = etdump
        elif isinstance(etdump, (bytes, bytearray)):
            buffer = Path(debug_buffer).read_bytes() if isinstance(debug_buffer, (str, Path)) else debug_buffer
            self.etdump = Etdump.from_bytes(bytes(etdump), buffer)
        else:
            self.etdump = Etdump.load(etdump, debug_buffer)
        self.time_unit = time_unit
        self.debug_info = debug_info if debug_info is not None else _debug_info_of(program)
        self.method: Optional[MethodDebugInfo] = None
        if self.debug_info is not None and self.debug_info.methods:
            self.method = self.debug_info.method(method) if method else self.debug_info.methods[0]
        self.runs = [run for run in self.etdump.runs if run.name == "Execute"] or list(self.etdump.runs)
        self.run_durations = [e.duration for run in self.runs for e in run.profile_events if e.name == _EXECUTE_EVENT]
        self.rows = self._build_rows()

    # ------------------------------------------------------------------ rows
    def _instruction(self, index: int) -> Optional[InstructionInfo]:
        return self.method.instruction(index) if self.method is not None else None

    def _build_rows(self) -> list[InspectorRow]:
        rows: dict[tuple[int, str], InspectorRow] = {}
        for run in self.runs:
            npu_index: dict[int, int] = {}  # per delegate instruction: non-DMA operations seen
            current = -1
            for event in run.events:
                if isinstance(event, AllocationEvent):
                    row = rows.get((current, ""))
                    if row is not None:
                        row.scratch_bytes = max(row.scratch_bytes, event.nbytes)
                    continue
                if not isinstance(event, ProfileEvent) or event.instruction < 0:
                    continue
                current = event.instruction
                key = (event.instruction, event.delegate_id)
                row = rows.get(key)
                if row is None:
                    row = self._new_row(event, npu_index)
                    rows[key] = row
                elif event.is_delegate_operation and event.counters.get("kind") != "dma":
                    npu_index[event.instruction] = npu_index.get(event.instruction, 0) + 1
                row.durations.append(event.duration)
        return list(rows.values())

    def _new_row(self, event: ProfileEvent, npu_index: dict[int, int]) -> InspectorRow:
        info = self._instruction(event.instruction)
        node = info.node if info is not None else None
        row = InspectorRow(event.instruction, event.name)
        if info is not None and not info.operator.startswith("delegate:"):
            row.operator = info.operator
        if event.is_delegate_operation:
            counters = event.counters
            row.npu_operation = event.delegate_id
            row.macs = int(counters.get("macs", 0))
            row.bytes_read = int(counters.get("bytes_read", 0))
            row.bytes_written = int(counters.get("bytes_written", 0))
            row.npu_cycles = int(counters.get("cycles", 0))
            layer = None
            if counters.get("kind") != "dma":
                ordinal = npu_index.get(event.instruction, 0)
                npu_index[event.instruction] = ordinal + 1
                layer = self._npu_layer(info, ordinal)
            if layer is not None:
                row.npu_layer = layer.name
                row.vela_cycles = layer.cycles if self._first_stripe(info, ordinal) else 0
                node = layer.node or node
        if node is not None:
            _fill_node(row, node)
        return row

    def _npu_layer(self, info: Optional[InstructionInfo], ordinal: int) -> Optional[NpuLayerInfo]:
        if info is None or info.delegate is None or self.method is None:
            return None
        delegates = self.method.delegates
        layers = delegates[info.delegate].layer_of_operation() if info.delegate < len(delegates) else []
        return layers[ordinal] if ordinal < len(layers) else None

    def _first_stripe(self, info: Optional[InstructionInfo], ordinal: int) -> bool:
        """Vela's estimate is per layer: it goes on the layer's first operation only."""
        if info is None or info.delegate is None or self.method is None:
            return False
        layers = self.method.delegates[info.delegate].layer_of_operation()
        return ordinal == 0 or layers[ordinal - 1] is not layers[ordinal]

    # ------------------------------------------------------------------ views
    def operator_totals(self) -> list[tuple[str, int, float]]:
        """(operator or NPU kind, calls per run, average time per run), most time first."""
        totals: dict[str, list[float]] = {}
        for row in self.rows:
            name = f"npu:{row.operator}" if row.is_npu_operation else row.operator
            entry = totals.setdefault(name, [0, 0.0])
            entry[0] += 1
            entry[1] += row.average
        return sorted(((name, int(n), t) for name, (n, t) in totals.items()), key=lambda item: -item[2])

    def table(self, *, width: int = 44) -> str:
        """A text table: one line per instruction and NPU operation."""
        unit = self.time_unit
        header = (f"{'instr':>5}  {'operator':<{width}} {'module':<26} {'npu op':<16} {'layer':<12} "
                  f"{f'avg ({unit})':>14} {'runs':>4} {'MACs':>11} {'Vela cycles':>11} {'NPU cycles':>11}")
        lines = [header, "-" * len(header)]
        for row in self.rows:
            module = f"{row.module_path} ({row.module_type})" if row.module_type else row.module_path
            name = row.operator if not row.is_npu_operation else f"  {row.operator}"
            lines.append(f"{row.instruction:>5}  {name[:width]:<{width}} {module[:26]:<26} {row.npu_operation[:16]:<16} "
                         f"{row.npu_layer[:12]:<12} {row.average:>14,.0f} {len(row.durations):>4} "
                         f"{row.macs:>11,} {row.vela_cycles:>11,} {row.npu_cycles:>11,}")
        if self.run_durations:
            lines.append(f"Method::execute: {len(self.run_durations)} run(s), median "
                         f"{statistics.median(self.run_durations):,.0f} {unit}")
        return "\n".join(lines)

    def to_dicts(self) -> list[dict[str, Any]]:
        out = []
        for row in self.rows:
            record = asdict(row)
            record["average"] = row.average
            record["median"] = row.median
            out.append(record)
        return out

    def write_json(self, path: Union[str, Path]) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"time_unit": self.time_unit, "runs": len(self.runs),
                                    "execute": self.run_durations, "rows": self.to_dicts()}, indent=1))
        return path

    def write_tsv(self, path: Union[str, Path]) -> Path:
        columns = ["instruction", "operator", "module_path", "module_type", "node", "npu_operation", "npu_layer",
                   f"average_{self.time_unit}", f"median_{self.time_unit}", "runs", "macs", "bytes_read",
                   "bytes_written", "vela_cycles", "npu_cycles", "scratch_bytes", "source"]
        lines = ["\t".join(columns)]
        for row in self.rows:
            values = [row.instruction, row.operator, row.module_path, row.module_type, row.node, row.npu_operation,
                      row.npu_layer, f"{row.average:.1f}", f"{row.median:.1f}", len(row.durations), row.macs,
                      row.bytes_read, row.bytes_written, row.vela_cycles, row.npu_cycles, row.scratch_bytes,
                      row.source]
            lines.append("\t".join(str(v).replace("\t", " ") for v in values))
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        return path

    def intermediates(self) -> list[DebugEvent]:
        """The logged values of the first run (with data when a debug buffer was given)."""
        return self.runs[0].debug_events if self.runs else []


def _fill_node(row: InspectorRow, node: NodeInfo) -> None:
    row.module_path = node.module_path
    row.module_type = node.module_type
    row.node = node.node
    row.source = node.source


def _debug_info_of(program: Any) -> Optional[DebugInfo]:
    if program is None:
        return None
    info = getattr(program, "debug_info", None)
    if info is not None or not isinstance(program, (str, Path)):
        return info
    path = DebugInfo.path_for(program)
    return DebugInfo.load(path) if path.is_file() else None
