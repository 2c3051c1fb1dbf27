"""``kiln-inspect``: an ETDump as a table of instructions and NPU operations, each named by
the PyTorch module and operator it came from.

    kiln-inspect mv2.etdp --program mv2_u55.pte                  # table on stdout
    kiln-inspect mv2.etdp --program mv2_u55.pte --tsv p.tsv --json p.json \\
                 --model-explorer node_data.json --plot profile.png

The program's ``<name>.debug.json`` (written by ``Program.save`` / ``kiln-aot``) supplies
the module paths; without it the table names operators only. Exit status: 0, or 2 with one
line saying why for a missing, truncated or foreign file (``--debug`` for the traceback).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    from kiln.cli.errors import OneLineArgumentParser

    parser = OneLineArgumentParser(prog="kiln-inspect", description=__doc__.split("\n\n")[0])
    parser.add_argument("etdump", type=Path, help="the ETDump (.etdp) to read")
    parser.add_argument("--program", type=Path, help="the .pte/.bpte it ran (its .debug.json names modules)")
    parser.add_argument("--debug-buffer", type=Path, help="the debug buffer recorded with it (intermediate values)")
    parser.add_argument("--method", help="the method the dump recorded (default: the program's first)")
    parser.add_argument("--time-unit", default="ns", help="unit of the dump's times: ns (host), ticks (firmware)")
    parser.add_argument("--tsv", type=Path, help="also write the table as tab-separated values")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--model-explorer", type=Path,
                        help="write Model Explorer node data (time per node) for --node_data_paths")
    parser.add_argument("--plot", type=Path, help="write the per-operator time profile as a PNG")
    parser.add_argument("--debug", action="store_true", help="full tracebacks")
    return parser


def run(args: argparse.Namespace) -> int:
    from kiln.devtools.inspector import Inspector

    inspector = Inspector(args.etdump, args.program, method=args.method, time_unit=args.time_unit,
                          debug_buffer=args.debug_buffer)
    print(inspector.table())
    if args.tsv:
        print(f"tsv: {inspector.write_tsv(args.tsv)}")
    if args.json:
        print(f"json: {inspector.write_json(args.json)}")
    if args.model_explorer:
        from kiln.devtools.model_explorer import write_node_data

        print(f"model explorer node data: {write_node_data(inspector, args.model_explorer)}")
    if args.plot:
        from kiln.devtools.plots import plot_operator_profile

        print(f"profile plot: {plot_operator_profile(inspector, args.plot)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    from kiln.cli.errors import report_failure

    try:
        return run(args)
    except (Exception, KeyboardInterrupt) as error:  # noqa: BLE001 - every failure ends in one line
        return report_failure(error, args.debug)


if __name__ == "__main__":
    sys.exit(main())
