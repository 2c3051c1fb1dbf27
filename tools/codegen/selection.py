"""What a selective build selects: every operator of the tables, a list of operators, a
YAML selection file, or the operators (and their tensor dtypes) of .pte programs."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Optional

import yaml

from op_tables import OpTable, OpTableError

# python/kiln/serialize/operator_list.py reads programs; it is loaded by path (not through the kiln
# package) so that code generation needs no torch, numpy or runtime extension.
_OPLIST = Path(__file__).resolve().parents[2] / "python" / "kiln" / "serialize" / "operator_list.py"


@dataclass
class Selection:
    """Selected operators -> the dtypes they need (None: unknown, no dtype check), and
    for each operator who asked for it (for error messages)."""

    description: str
    ops: dict[str, Optional[set[str]]] = field(default_factory=dict)
    needed_by: dict[str, str] = field(default_factory=dict)

    def add(self, op: str, dtypes: Optional[set[str]], needed_by: str) -> None:
        if op not in self.ops:
            self.ops[op], self.needed_by[op] = (set(dtypes) if dtypes is not None else None), needed_by
            return
        known = self.ops[op]
        if known is not None and dtypes is not None:
            known |= dtypes
        else:
            self.ops[op] = None if known is None and dtypes is None else (known or set()) | (dtypes or set())
        if needed_by not in self.needed_by[op]:
            self.needed_by[op] += f" and {needed_by}"

    @property
    def has_all_dtypes(self) -> bool:
        return all(dtypes is not None for dtypes in self.ops.values())


def select_all(tables: list[OpTable]) -> Selection:
    selection = Selection("every operator of the tables")
    for table in tables:
        for op in table.entries:
            selection.add(op, None, f"the '{table.library}' table")
    return selection


def select_ops(names: list[str]) -> Selection:
    selection = Selection(f"operators {', '.join(names)}")
    for name in names:
        if name.strip():
            selection.add(name.strip(), None, "the operator list (OPS)")
    return selection


def select_yaml(path: Path) -> Selection:
    """A YAML list; each item an operator name, or {op: name, dtypes: [...]} as
    `kiln-oplist --yaml` prints."""
    path = Path(path).resolve()
    try:
        rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise OpTableError(f"selection file {path}: {error}") from error
    if not isinstance(rows, list):
        raise OpTableError(f"selection file {path}: expected a YAML list of operators, got {type(rows).__name__}")
    selection = Selection(f"selection file {path}")
    for row in rows:
        if isinstance(row, str):
            selection.add(row, None, f"selection file {path}")
        elif isinstance(row, dict) and "op" in row and set(row) <= {"op", "dtypes"}:
            dtypes = row.get("dtypes")
            selection.add(str(row["op"]), None if dtypes is None else set(map(str, dtypes)), f"selection file {path}")
        else:
            raise OpTableError(f"selection file {path}: {row!r} is neither an operator name nor {{op:, dtypes:}}")
    return selection


def _load_module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise OpTableError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def select_programs(programs: list[Path], schema_module: Path) -> Selection:
    """Operators of every program, with the dtypes of the tensors their calls pass."""
    oplist = _load_module("kiln_oplist", _OPLIST)
    schema = _load_module("kiln_pte_schema", schema_module)
    selection = Selection(f"program(s) {', '.join(str(p) for p in programs)}")
    for program in programs:
        program = Path(program).resolve()
        try:
            uses = oplist.read_program_operators(program.read_bytes(), schema)
        except (OSError, ValueError) as error:
            raise OpTableError(f"program {program}: {error}") from error
        for use in uses.values():
            selection.add(use.name, set(use.dtypes), f"program {program}")
    return selection
