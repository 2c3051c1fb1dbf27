"""``kiln-deploy``: compile a model, build the Cortex-M firmware, run it in QEMU, check it.

    kiln-deploy --model_name smallcnn
    kiln-deploy --model_name mv2 --quantize --delegate --target ethos-u55-128
    kiln-deploy --model_name mv2 --quantize --delegate --target ethos-u85-128
    kiln-deploy --model_name mv2 --quantize --target cortex-m55
    kiln-deploy --model_name=mv2 --target=ethos-u55-128 --output=out \\
        --aot_arm_compiler_flags="--delegate --quantize --intermediates out/aot --evaluate"
    kiln-deploy --model_name mv2 -q -d --bundleio --atol 0.5 --etdump mv2.etdp
    kiln-deploy --model_name smallcnn --board my_board.json --build-only

Prints one line per step (kiln-aot's and the build's output go to compile.log and
build.log in the output folder), the firmware's UART log, then compares its outputs with
the host runtime's (kiln.runtime) for the same inputs, bit for bit. Relative paths are
the current folder's; the firmware is built in <output>/firmware-<cpu> (or --build-dir)
from the sources installed with the kiln package, or from --source-dir.

The board is a board file (format: docs/board-files.md): --board names a shipped board
(corstone-300, corstone-320, mps2-an386, mps2-an505) or gives the path of one of your own.
Without --board, Ethos-U85 programs get corstone-320 (its memory sizes; it runs on the same
QEMU machine as the rest, mps3-an547, Cortex-M55: QEMU has no Corstone-320) and everything
else corstone-300; the firmware drives the NPU through its registers, where QEMU finds Kiln's
virtual Ethos-U behind them (docs/real-silicon.md) either way. With
--build-only, or for a board no QEMU machine runs, the firmware is built, not run: the image
to flash (ELF, Intel HEX, a raw .bin per memory region) goes to <output>/image with a note of
how to run it on the board, which is also printed.

Exit status: 0 when the outputs are equal; 2 for a bad command line or model (one
line, --debug for the traceback); otherwise the failing step's: kiln-aot's or CMake's exit
code, the firmware's own status (1 runtime error, 2 outputs differ, 3 fault, 4 abort),
2 when the host check finds a difference, 124 when QEMU exceeds --timeout.

With --bundleio the firmware embeds a bundled program (<name>.bpte: the program with the
example input and the outputs eager PyTorch — or, with --quantize, the quantized model —
computes for it) and checks them on the device: "Test_result: PASS" and exit 0, or
"Test_result: FAIL" and exit 2. --etdump records the run as an ETDump (times in ticks of
the board's counter) that the firmware writes to the host through semihosting.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import shlex
import shutil
import sys
from pathlib import Path

import numpy as np

from kiln.boards import DEFAULT_BOARD, BoardFileError, BoardProfile, load_board
from kiln.cli.compile_options import add_compile_options, passed_on
from kiln.cli.errors import OneLineArgumentParser, report_failure
from kiln.deploy.firmware import PRESETS, build_firmware, find_build_tools, locate_sources
from kiln.deploy.image import make_image, run_note, write_run_note
from kiln.deploy.prepare import DeployError, PreparedProgram, prepare_program
from kiln.deploy.qemu import QemuTimeout, run_firmware
from kiln.deploy.steps import StepPrinter
from kiln.memory.manifest import pool_budget
from kiln.tolerances import BUNDLE_ATOL, BUNDLE_RTOL

EXIT_OUTPUTS_DIFFER = 2
EXIT_TIMEOUT = 124


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineArgumentParser(prog="kiln-deploy", description=__doc__.split("\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter,
                                   epilog="\n".join(__doc__.split("\n")[2:]))
    parser.add_argument("--model_name", "-m", required=True, help="a kiln.models name or path/to/file.py:Class")
    add_compile_options(parser, for_deploy=True)
    parser.add_argument("--aot_arm_compiler_flags", metavar="FLAGS", default="",
                        help="compile flags in one string, as ExecuTorch's run.sh takes them, e.g. "
                             "\"--delegate --quantize --intermediates DIR --evaluate\"")
    parser.add_argument("--board", metavar="NAME_OR_FILE",
                        help="the board: a shipped board's name (corstone-300, corstone-320, mps2-an386, mps2-an505) "
                             "or the path of a board file (docs/board-files.md); default: corstone-300, "
                             "corstone-320 for Ethos-U85 programs")
    parser.add_argument("--cpu", choices=sorted(PRESETS),
                        help="the core the firmware is compiled for (default: the core that runs it: QEMU's for a "
                             "board QEMU runs, else the board's)")
    parser.add_argument("--output_dir", "--output", "-o", type=Path, metavar="DIR",
                        help="where the program, logs and firmware go (default: deploy/<model>)")
    parser.add_argument("--build-dir", type=Path, metavar="DIR",
                        help="the firmware's CMake build folder (default: <output>/firmware-<cpu>)")
    parser.add_argument("--selective", action="store_true",
                        help="link only the kernels the program calls, compiled for only the dtypes it uses "
                             "(selective build: a smaller firmware, built faster)")
    parser.add_argument("--build_only", "--build-only", action="store_true",
                        help="build the firmware, do not run it: leave the image to flash (ELF, Intel HEX, a .bin per "
                             "memory region) in <output>/image and print how to run it on the board (implied for a "
                             "board that no QEMU machine runs)")
    parser.add_argument("--timeout", type=float, default=300.0, help="QEMU time bound in seconds")
    parser.add_argument("--source-dir", type=Path,
                        help="the Kiln source tree to build the firmware from (default: the sources installed "
                             "with the kiln package)")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="parallel compile jobs")
    parser.add_argument("--bundleio", action="store_true",
                        help="embed a bundled program (test case: the example input and the reference outputs) "
                             "and check it on the device (Test_result: PASS/FAIL)")
    parser.add_argument("--rtol", type=float, default=BUNDLE_RTOL,
                        help=f"bundled test tolerance, relative (default {BUNDLE_RTOL:g})")
    parser.add_argument("--atol", type=float, default=BUNDLE_ATOL,
                        help=f"bundled test tolerance, absolute (default {BUNDLE_ATOL:g})")
    parser.add_argument("--etdump", type=Path, help="record an ETDump of the firmware's run into this host file")
    parser.add_argument("--etdump-bytes", type=int, default=256 * 1024,
                        help="the firmware's ETDump memory (default 256 KiB; when full it stops and counts drops)")
    return parser


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, with the flags inside --aot_arm_compiler_flags merged in."""
    args = build_parser().parse_args(argv)
    if args.aot_arm_compiler_flags.strip():
        inner = OneLineArgumentParser(prog="kiln-deploy --aot_arm_compiler_flags", add_help=False,
                                      argument_default=argparse.SUPPRESS)
        add_compile_options(inner, for_deploy=True)
        for name, value in vars(inner.parse_args(shlex.split(args.aot_arm_compiler_flags))).items():
            setattr(args, name, value)
    return args


def make_bundle(prepared: PreparedProgram, intermediates: Path, out: Path, quantized: bool) -> Path:
    """``<name>.bpte``: the program with one test case, the example inputs and the outputs
    the model computes for them (eager PyTorch, or the quantized model for int8 programs)."""
    from kiln.devtools.bundled_program import TestCase, bundle

    prefix = "quantized_reference_output" if quantized else "reference_output"
    paths = sorted(intermediates.glob(f"{prefix}_*.npy"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    if not paths:
        raise DeployError(f"kiln-aot wrote no {prefix}_<i>.npy into {intermediates}")
    case = TestCase([np.load(p) for p in prepared.inputs], [np.load(p) for p in paths])
    return bundle(prepared.pte, [case]).save(out / f"{prepared.name}.bpte")


def firmware_options(args: argparse.Namespace) -> list[str]:
    """The -D options of --etdump, the bundle tolerance and the firmware's NPU (always given,
    so that a reused build folder forgets the previous run's). The NPU is the one --target
    names: the board's device model is made as that Ethos-U, as silicon would be chosen."""
    from kiln.targets import DEFAULT_TARGET

    etdump = str(args.etdump.resolve()) if args.etdump else ""
    npu = (args.target or DEFAULT_TARGET) if args.delegate else ""
    return [f"-DKILN_FIRMWARE_ETDUMP={etdump}", f"-DKILN_FIRMWARE_ETDUMP_BYTES={args.etdump_bytes}",
            f"-DKILN_FIRMWARE_BUNDLE_RTOL={args.rtol!r}", f"-DKILN_FIRMWARE_BUNDLE_ATOL={args.atol!r}",
            f"-DKILN_FIRMWARE_NPU_TARGET={npu}"]


def aot_flags(args: argparse.Namespace) -> list[str]:
    """kiln-aot's flags for this deployment (the intermediates folder is passed on separately)."""
    return passed_on(args, leave_out=("intermediates",))


def check_target(args: argparse.Namespace) -> None:
    """Refuses, before anything is built, an NPU that nothing would run on and an NPU the
    virtual Ethos-U cannot run; checks the NPU flags' names (with suggestions)."""
    from kiln.backends.arm.compile_spec import EthosUCompileSpec
    from kiln.backends.arm.vnpu import virtual_npu_refusal
    from kiln.targets import DEFAULT_TARGET, check_cortex_m_target, is_cortex_m_name

    if args.target is not None and is_cortex_m_name(args.target):
        # ExecuTorch's run.sh names the CPU with --target; with --quantize (and no NPU) the
        # int8 program is compiled for that CPU's cortex_m:: kernels (kiln-aot --target).
        target = check_cortex_m_target(args.target.strip().lower())
        if target not in PRESETS:
            raise DeployError(f"no firmware for {target} yet: kiln-deploy builds for {', '.join(sorted(PRESETS))} "
                              f"(kiln-aot --target {target} --quantize compiles the program)", 2)
        args.cpu = target
        args.target = target if args.quantize and not args.delegate else None
    if args.delegate and not args.quantize:
        raise DeployError("--delegate needs --quantize: the Ethos-U NPU runs int8 programs", 2)
    npu_flags = [f"--{name} {getattr(args, name)}" for name in ("target", "system_config", "memory_mode")
                 if getattr(args, name) is not None and not (name == "target" and args.target == args.cpu)]
    if not (npu_flags or args.delegate):
        return
    spec = EthosUCompileSpec(args.target or DEFAULT_TARGET, system_config=args.system_config,
                             memory_mode=args.memory_mode)
    if not args.delegate:
        raise DeployError(f"{' '.join(npu_flags)} names the NPU, but without --delegate the whole model runs on "
                          f"the {args.cpu or _default_cpu()}: add --quantize --delegate to use the NPU, or leave the "
                          "NPU flags out", 2)
    refusal = virtual_npu_refusal(spec.target)
    if refusal is not None:
        raise DeployError(refusal, 2)


def _default_cpu() -> str:
    """The core that runs firmware for the default board (for messages)."""
    try:
        board = load_board(DEFAULT_BOARD)
    except BoardFileError:
        return "CPU"
    return board.qemu.cpu if board.qemu else board.cpu.core


#: The boards kiln-deploy picks from without --board: the first whose NPU runs the target.
DEFAULT_BOARDS = (DEFAULT_BOARD, "corstone-320")


def board_for(args: argparse.Namespace, source_tree: Path | None = None) -> BoardProfile:
    """The board the firmware is built for: --board, else the first of DEFAULT_BOARDS whose
    NPU runs the program's target (the Corstone-320 for Ethos-U85 programs), else the
    Corstone-300. Board files come from ``source_tree`` (default: the installed sources)."""
    from kiln.targets import DEFAULT_TARGET

    if args.board:
        return load_board(args.board, source_tree)
    if args.delegate:
        target = args.target or DEFAULT_TARGET
        for name in DEFAULT_BOARDS:
            board = load_board(name, source_tree)
            if board.npu is not None and board.npu.allows(target):
                return board
    return load_board(DEFAULT_BOARD, source_tree)


def check_board(args: argparse.Namespace, board: BoardProfile) -> None:
    """Refuses an NPU program for a board without that NPU, and a CPU kiln-deploy has no
    firmware preset for; picks the firmware's core (args.cpu) when none is given."""
    from kiln.targets import DEFAULT_TARGET

    if args.delegate:
        target = args.target or DEFAULT_TARGET
        if board.npu is None:
            raise DeployError(f"board {board.name} has no NPU ({board.path}): leave out --delegate to run the "
                              "model on the CPU, or choose a board with an Ethos-U", 2)
        if not board.npu.allows(target):
            raise DeployError(f"board {board.name}'s NPU is {' or '.join(board.npu.families)}, not {target} "
                              f"({board.path}): choose a target of that family or another board", 2)
    if args.cpu is None:
        runs_on_qemu = board.qemu is not None and not args.build_only
        args.cpu = board.qemu.cpu if runs_on_qemu else board.cpu.core
    if args.cpu not in PRESETS:
        raise DeployError(f"board {board.name}'s firmware would run on a {args.cpu} ({board.path}), but kiln-deploy "
                          f"builds firmware for {' and '.join(sorted(PRESETS))} only", 2)


def qemu_description(board: BoardProfile) -> str:
    """What QEMU runs, said plainly (QEMU has no Corstone-320, for instance)."""
    assert board.qemu is not None
    return f"QEMU {board.qemu.machine} ({board.qemu.description})"


def check_outputs(prepared: PreparedProgram, log_text: str) -> list[str]:
    """Differences between the firmware's outputs (from its log) and the host runtime's."""
    from kiln.deploy.firmware_log import parse_firmware_log  # imports the runtime (and torch): only now

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


def uart_report(uart: str) -> str:
    """The firmware's UART log for the terminal: without the hex dump of its outputs
    (``KILN-OUTPUT``/``KILN-HEX`` lines, kept in firmware.log and checked here)."""
    lines = [line for line in uart.splitlines() if not line.lstrip().startswith(("KILN-OUTPUT", "KILN-HEX"))]
    return "\n".join(lines)


def shown(path: Path) -> str:
    """``path`` relative to the current folder when it is inside it, else absolute."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd().resolve()) else str(path)
    except ValueError:
        return str(path)


def _fresh_log(path: Path) -> Path:
    path.unlink(missing_ok=True)
    return path


def deploy(args: argparse.Namespace) -> int:
    check_target(args)
    sources = locate_sources(args.source_dir)
    board = board_for(args, sources.path)
    if board.qemu is None:
        args.build_only = True
    check_board(args, board)
    name = Path(args.model_name.split(":")[-1]).stem
    # Every path is the caller's: resolved here, before any tool runs in another folder.
    out = (args.output_dir or Path("deploy") / name).resolve()
    build_dir = (args.build_dir or out / f"firmware-{args.cpu}").resolve()
    intermediates = args.intermediates.resolve() if args.intermediates else None
    find_build_tools()
    if not args.build_only and shutil.which("qemu-system-arm") is None:
        raise DeployError("qemu-system-arm not found: apt-get install qemu-system-arm (or use --build_only)", 2)

    steps = StepPrinter(2 if args.build_only else 3)
    steps.note(f"firmware sources: {sources.path} ({sources.origin})")
    steps.note(f"board {board.name} ({shown(board.path)}), firmware for the {args.cpu}"
               + (f", run on {qemu_description(board)}" if not args.build_only else ""))
    if board.qemu is None:
        steps.note(f"board {board.name} has no QEMU machine (no qemu in its board file): building only")
    compile_log = _fresh_log(out / "compile.log")
    with steps.step(f"compiling {args.model_name} -> {shown(out / name)}.pte (log: {shown(compile_log)})"):
        prepared = prepare_program(args.model_name, out, name, aot_flags(args), intermediates=intermediates,
                                   log=compile_log, board=pool_budget(board))
    from kiln.memory.manifest import describe

    print(describe(prepared.manifest), flush=True)
    evaluation = [line for line in compile_log.read_text(errors="replace").splitlines()
                  if line.startswith("evaluate:")]
    if evaluation:
        print("\n".join(evaluation), flush=True)
    if args.bundleio:
        bundled = make_bundle(prepared, intermediates or out / "intermediates", out, args.quantize)
        steps.note(f"bundled program {shown(bundled)} (tolerance rtol {args.rtol:g}, atol {args.atol:g})")
        prepared = dataclasses.replace(prepared, pte=bundled)
    if args.etdump:
        args.etdump = args.etdump.resolve()
        args.etdump.parent.mkdir(parents=True, exist_ok=True)
    build_log = _fresh_log(out / "build.log")
    with steps.step(f"building the firmware ({args.cpu}) in {shown(build_dir)} (log: {shown(build_log)})") as step:
        elf = build_firmware(prepared, build_dir, sources, build_log, args.cpu, ethos_u=args.delegate,
                             selective=args.selective, jobs=args.jobs, on_line=step.ninja_progress,
                             cmake_args=firmware_options(args), board_file=board.path)
    if args.build_only:
        image = make_image(elf, board, out / "image", prepared.name)
        write_run_note(image, board)
        steps.note(f"built {shown(elf)}; the image to flash is in {shown(image.elf.parent)} "
                   f"(how to run it: {shown(image.note)})")
        print(run_note(image, board, shown), flush=True)
        return 0
    try:
        with steps.step(f"running {shown(elf)} in {qemu_description(board)}, time bound {args.timeout:g} s"):
            result = run_firmware(elf, timeout=args.timeout, machine=board.qemu.machine)
    except QemuTimeout as timeout:
        print(uart_report(timeout.output), flush=True)
        raise DeployError(str(timeout), EXIT_TIMEOUT) from None
    (out / "firmware.log").write_text(result.output)
    print(uart_report(result.output), flush=True)
    if args.etdump:
        steps.note(f"etdump: {shown(args.etdump)} (times in ticks: kiln-inspect {shown(args.etdump)} "
                   f"--program {shown(out / (prepared.name + '.pte'))} --time-unit ticks)")
    if result.exit_code != 0:
        meaning = ("a bundled test case failed" if args.bundleio and result.exit_code == EXIT_OUTPUTS_DIFFER
                   else result.meaning)
        raise DeployError(f"the firmware exited with {result.exit_code} ({meaning}); "
                          f"log: {shown(out / 'firmware.log')}", result.exit_code)
    if args.bundleio:
        steps.note(f"ok: the bundled test case passed on the device ({result.seconds:.1f} s in QEMU)")
        return 0
    problems = check_outputs(prepared, result.output)
    if problems:
        raise DeployError("; ".join(problems), EXIT_OUTPUTS_DIFFER)
    steps.note(f"ok: {len(prepared.expected_outputs)} output(s) equal the host runtime's bit for bit "
               f"({result.seconds:.1f} s in QEMU); log: {shown(out / 'firmware.log')}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return deploy(args)
    except (Exception, KeyboardInterrupt) as error:  # noqa: BLE001 - every failure ends in one line
        return report_failure(error, args.debug)


if __name__ == "__main__":
    sys.exit(main())
