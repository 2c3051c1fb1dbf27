"""``kiln-oplist``: the operators (and tensor dtypes) a ``.pte`` program calls.

    kiln-oplist model.pte                 # one operator per line
    kiln-oplist model.pte --dtypes        # operator  Float, Long
    kiln-oplist model.pte --yaml          # a selection file for kiln_selective_kernels(OPS_YAML)
    kiln-oplist model.bpte                # the program inside a bundled program

The reader is :mod:`kiln.serialize.operator_list`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Sequence

from kiln.cli.errors import EXIT_FAILURE, OneLineArgumentParser, one_line, report_failure
from kiln.serialize.operator_list import (
    OperatorUse,
    ProgramReadError,
    program_operators,
)


def format_yaml(operators: dict[str, OperatorUse], source: str) -> str:
    """A selection file (OPS_YAML) naming each operator and its dtypes."""
    lines = [f"# Operators and dtypes of {source} (kiln-oplist --yaml)."]
    for use in operators.values():
        lines.append(f"- op: {use.name}")
        lines.append(f"  dtypes: [{', '.join(sorted(use.dtypes))}]")
    return "\n".join(lines) + "\n"


def format_text(operators: dict[str, OperatorUse], with_dtypes: bool) -> str:
    if not with_dtypes:
        return "".join(f"{name}\n" for name in operators)
    width = max((len(name) for name in operators), default=0)
    return "".join(f"{use.name:<{width}}  {', '.join(sorted(use.dtypes)) or '-'}\n" for use in operators.values())


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Exit status: 0 ok, 1 a file that cannot be read as a program or an internal error,
    2 a bad command line; every failure is one line (``--debug`` adds the traceback)."""
    parser = OneLineArgumentParser(prog="kiln-oplist", description=__doc__.split("\n\n")[0])
    parser.add_argument("program", type=Path, help="a .pte file (Kiln's or ExecuTorch's)")
    parser.add_argument("--dtypes", action="store_true", help="also print the tensor dtypes each operator sees")
    parser.add_argument("--yaml", action="store_true", help="print a selection YAML (op + dtypes) for OPS_YAML")
    parser.add_argument("--debug", action="store_true", help="full tracebacks")
    args = parser.parse_args(argv)
    try:
        operators = program_operators(args.program)
        text = format_yaml(operators, args.program.name) if args.yaml else format_text(operators, args.dtypes)
    except (OSError, ProgramReadError) as error:
        if args.debug:
            raise
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        print(f"error: {args.program}: {one_line(reason)}", file=sys.stderr)
        return EXIT_FAILURE
    except (Exception, KeyboardInterrupt) as error:  # noqa: BLE001 - every failure ends in one line
        return report_failure(error, args.debug)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
