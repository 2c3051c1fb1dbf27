"""Copies a Kiln program with one operator renamed, so that it needs a kernel no library
has: the input of the firmware selective-build failure test (tests/firmware/CMakeLists.txt).

    python rename_operator.py SOURCE.pte TARGET.pte aten::add aten::add_that_does_not_exist
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kiln.serialize import read_pte, write_pte


def rename_operator(source: Path, target: Path, old: str, new: str) -> None:
    program, segments = read_pte(source.read_bytes())
    renamed = 0
    for plan in program.executionPlan:
        for operator in plan.operators:
            name = operator.name.decode() if isinstance(operator.name, bytes) else operator.name
            if name == old:
                operator.name = new
                renamed += 1
    if not renamed:
        raise SystemExit(f"rename_operator: {source} calls no operator {old}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(write_pte(program, segments))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("old", help="operator name without overload, e.g. aten::add")
    parser.add_argument("new")
    args = parser.parse_args(argv)
    rename_operator(args.source, args.target, args.old, args.new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
