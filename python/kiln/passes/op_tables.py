"""Kernel op tables (kernels/<library>/op_table.yaml) and choosing a kernel per operator.

The schema is documented at the top of kernels/portable/op_table.yaml. A build may
layer several libraries, given most specific first (e.g. optimized, portable): an
operator gets the kernel of the first library that has the operator and supports every
dtype the selection needs for it.

The one reader of op tables: the registration code generator (tools/codegen, which loads
this file by path at CMake time, so it imports only the standard library and PyYAML) and
the kernel check of :func:`kiln.export` (:mod:`kiln.passes.kernel_availability`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import yaml

#: Dtype names a table may list (c10 ScalarType names), plus "any".
KNOWN_DTYPES = frozenset(
    {"Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "Bool", "BFloat16",
     "UInt16", "UInt32", "UInt64", "QInt8", "QUInt8", "QInt32", "any"}
)  # fmt: skip
_ENTRY_KEYS = {"op", "kernel", "source", "dtypes"}
_OPTIONAL_KEYS = {"out_dtypes"}  # kiln.export's check reads it; the build needs only `dtypes`
_OP_NAME = re.compile(r"^[A-Za-z_]\w*::[A-Za-z_]\w*(\.\w+)?$")
_KERNEL_NAME = re.compile(r"^([A-Za-z_]\w*::)+[A-Za-z_]\w*$")


class OpTableError(ValueError):
    """A table breaks the schema, or a selection cannot be satisfied."""


@dataclass(frozen=True)
class KernelEntry:
    """One row of an op table."""

    library: str
    op: str
    kernel: str  # fully qualified C++ function
    source: Path  # absolute
    dtypes: frozenset[str]  # "any" means every dtype (the kernel only moves bytes)
    out_dtypes: frozenset[str]  # those it writes (the table's out_dtypes, else dtypes)

    def supports(self, dtype: str) -> bool:
        return "any" in self.dtypes or dtype in self.dtypes

    def writes(self, dtype: str) -> bool:
        return "any" in self.out_dtypes or dtype in self.out_dtypes

    def describe_dtypes(self) -> str:
        return "any dtype" if "any" in self.dtypes else ", ".join(sorted(self.dtypes)) or "no tensors"

    def describe(self) -> str:
        """``"portable kernel takes Char, Float"``, and what it writes when that differs."""
        accepted = self.describe_dtypes()
        if self.out_dtypes != self.dtypes:
            accepted += f", writes {', '.join(sorted(self.out_dtypes))}"
        return f"{self.library} kernel takes {accepted}"


@dataclass(frozen=True)
class OpTable:
    library: str
    path: Path
    entries: dict[str, KernelEntry]  # op -> entry, in table order

    @property
    def sources(self) -> list[Path]:
        return list(dict.fromkeys(entry.source for entry in self.entries.values()))


def load_op_table(library: str, path: Path, *, check_sources: bool = True) -> OpTable:
    """Reads and checks one table: keys, names, dtypes, unique ops and (``check_sources``:
    the build's use; an installed package ships the tables without the sources) existing
    sources."""
    path = Path(path).resolve()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise OpTableError(f"{path}: cannot read the op table: {error}") from error
    return parse_op_table(library, text, path, check_sources=check_sources)


def parse_op_table(library: str, text: str, path: Path, *, check_sources: bool = True) -> OpTable:
    """:func:`load_op_table` of a table's ``text`` (``path``: where it is, for messages and sources)."""
    where = f"{path}"
    try:
        rows = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise OpTableError(f"{where}: cannot read the op table: {error}") from error
    if not isinstance(rows, list):
        raise OpTableError(f"{where}: an op table is a YAML list of entries, got {type(rows).__name__}")
    entries: dict[str, KernelEntry] = {}
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or not _ENTRY_KEYS <= set(row) <= _ENTRY_KEYS | _OPTIONAL_KEYS:
            keys = sorted(row) if isinstance(row, dict) else row
            raise OpTableError(f"{where}: entry {number} must have the keys {sorted(_ENTRY_KEYS)} "
                               f"(and optionally {sorted(_OPTIONAL_KEYS)}), has {keys}")
        op, kernel, source, dtypes = str(row["op"]), str(row["kernel"]), str(row["source"]), row["dtypes"]
        if not _OP_NAME.match(op):
            raise OpTableError(f"{where}: entry {number}: op {op!r} is not '<namespace>::<name>[.<overload>]'")
        if not _KERNEL_NAME.match(kernel):
            raise OpTableError(f"{where}: {op}: kernel {kernel!r} is not a qualified C++ name")
        if not isinstance(dtypes, list) or not set(map(str, dtypes)) <= KNOWN_DTYPES:
            raise OpTableError(f"{where}: {op}: dtypes {dtypes!r} must be a list of {sorted(KNOWN_DTYPES)}")
        out_dtypes = row.get("out_dtypes", dtypes)
        if not isinstance(out_dtypes, list) or not set(map(str, out_dtypes)) <= set(map(str, dtypes)) | {"any"}:
            raise OpTableError(f"{where}: {op}: out_dtypes {out_dtypes!r} must be a list of some of its dtypes")
        if op in entries:
            raise OpTableError(f"{where}: operator {op} is listed twice")
        source_path = (path.parent / source).resolve()
        if check_sources and not source_path.is_file():
            raise OpTableError(f"{where}: {op}: source {source} does not exist")
        entries[op] = KernelEntry(library, op, kernel, source_path, frozenset(map(str, dtypes)),
                                  frozenset(map(str, out_dtypes)))
    return OpTable(library, path, entries)


def choose_kernel(tables: list[OpTable], op: str, dtypes: Optional[set[str]], needed_by: str) -> KernelEntry:
    """The kernel for `op` from the first table (most specific first) that has it and
    supports every dtype in `dtypes` (None: dtypes unknown, any kernel will do).
    Raises OpTableError naming the op, the dtype and `needed_by` (e.g. the program)."""
    candidates = [table.entries[op] for table in tables if op in table.entries]
    searched = ", ".join(f"{table.library} ({table.path})" for table in tables)
    if not candidates:
        uses = f" with dtypes {', '.join(sorted(dtypes))}" if dtypes else ""
        raise OpTableError(f"{needed_by} needs operator {op}{uses}, but no kernel library provides it (searched {searched})")
    for entry in candidates:
        if dtypes is None or all(entry.supports(dtype) for dtype in dtypes):
            return entry
    entry = candidates[0]
    missing = sorted(d for d in dtypes or () if not any(c.supports(d) for c in candidates)) or sorted(dtypes or ())
    offered = "; ".join(f"{c.library}: {c.describe_dtypes()}" for c in candidates)
    raise OpTableError(
        f"{needed_by} needs operator {op} with dtype {', '.join(missing)}, but no kernel supports it "
        f"({offered}; tables: {searched})"
    )
