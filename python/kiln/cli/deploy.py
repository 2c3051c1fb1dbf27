"""``kiln-deploy``: compile a model, build the Cortex-M firmware, run it in QEMU, check it.

    kiln-deploy --model_name smallcnn
    kiln-deploy --model_name mv2 --quantize --delegate --target ethos-u55-128

Prints the firmware's UART log, then compares its outputs with the host runtime's
(kiln.runtime) for the same inputs, bit for bit. Exit status: 0 when they are equal;
otherwise the failing step's: kiln-aot's or CMake's exit code, the firmware's own status
(1 runtime error, 2 outputs differ, 3 fault, 4 abort), 2 when the host check finds a
difference, 124 when QEMU exceeds --timeout.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import numpy as np

from kiln.deploy.firmware import PRESETS, build_firmware
from kiln.deploy.firmware_log import parse_firmware_log
from kiln.deploy.prepare import DeployError, PreparedProgram, prepare_program
from kiln.deploy.qemu import QemuTimeout, run_firmware

EXIT_OUTPUTS_DIFFER = 2
EXIT_TIMEOUT = 124


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kiln-deploy", description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.split("\n")[2:]))
    parser.add_argument("--model_name", "-m", required=True, help="a kiln.models name or path/to/file.py:Class")
    parser.add_argument("--quantize", "-q", action="store_true", help="int8 (kiln-aot --quantize)")
    parser.add_argument("--delegate", "-d", action="store_true",
                        help="lower to the Ethos-U NPU (kiln-aot --delegate); the firmware runs it on "
                             "Kiln's virtual Ethos-U")
    parser.add_argument("--target", "-t", help="NPU target for --delegate, e.g. ethos-u55-128")
    parser.add_argument("--cpu", default="cortex-m55", choices=sorted(PRESETS), help="firmware CPU")
    parser.add_argument("--output_dir", "-o", type=Path,
                        help="where the program, firmware and log go (default: deploy/<model>)")
    parser.add_argument("--timeout", type=float, default=300.0, help="QEMU time bound in seconds")
    parser.add_argument("--source-dir", type=Path, help="the Kiln checkout to build firmware from")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="parallel compile jobs")
    return parser


def _aot_args(args: argparse.Namespace) -> list[str]:
    extra = []
    if args.quantize:
        extra.append("--quantize")
    if args.delegate:
        extra.append("--delegate")
    if args.target:
        extra += ["--target", args.target]
    return extra


def check_outputs(prepared: PreparedProgram, log_text: str) -> list[str]:
    """Differences between the firmware's outputs (from its log) and the host runtime's."""
    log = parse_firmware_log(log_text)
    problems = []
    for i, path in enumerate(prepared.expected_outputs):
        expected = np.load(path)
        if i not in log.output_bytes:
            problems.append(f"output {i}: missing from the firmware log")
            continue
        got = log.output(i, expected.shape)
        if got.dtype != expected.dtype:
            problems.append(f"output {i}: firmware dtype {got.dtype}, host {expected.dtype}")
        elif got.tobytes() != expected.tobytes():
            differing = int(np.count_nonzero(got.view(np.uint8) != expected.view(np.uint8)))
            problems.append(f"output {i}: {differing} of {expected.nbytes} bytes differ from the host runtime's")
    return problems


def deploy(args: argparse.Namespace) -> int:
    name = Path(args.model_name.split(":")[-1]).stem
    out = args.output_dir or Path("deploy") / name
    print(f"[kiln-deploy] 1/3 compiling {args.model_name} -> {out}/{name}.pte", flush=True)
    prepared = prepare_program(args.model_name, out, name, _aot_args(args))
    from kiln.memory.manifest import describe

    print(describe(prepared.manifest), flush=True)
    print(f"[kiln-deploy] 2/3 building the firmware ({args.cpu})", flush=True)
    elf = build_firmware(prepared, out / f"firmware-{args.cpu}", args.source_dir, args.cpu,
                         ethos_u=args.delegate, jobs=args.jobs)
    print(f"[kiln-deploy] 3/3 running {elf} in QEMU mps3-an547 (Corstone-300), "
          f"time bound {args.timeout:g} s", flush=True)
    try:
        result = run_firmware(elf, timeout=args.timeout)
    except QemuTimeout as timeout:
        print(timeout.output, end="")
        print(f"error: {timeout}", file=sys.stderr)
        return EXIT_TIMEOUT
    print(result.output, end="" if result.output.endswith("\n") else "\n")
    (out / "firmware.log").write_text(result.output)
    if result.exit_code != 0:
        print(f"error: the firmware exited with {result.exit_code} ({result.meaning})", file=sys.stderr)
        return result.exit_code
    problems = check_outputs(prepared, result.output)
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return EXIT_OUTPUTS_DIFFER
    print(f"[kiln-deploy] ok: {len(prepared.expected_outputs)} output(s) equal the host runtime's "
          f"bit for bit ({result.seconds:.1f} s in QEMU); log: {out / 'firmware.log'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return deploy(args)
    except DeployError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code


if __name__ == "__main__":
    sys.exit(main())
