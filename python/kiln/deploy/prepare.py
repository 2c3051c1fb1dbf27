"""Step 1 of a deployment: the program and everything the firmware embeds with it.

``prepare_program("add", out_dir)`` leaves in ``out_dir``::

    add.pte                 kiln-aot's output
    add.manifest.json       the memory manifest (kiln.memory.manifest)
    add_memory.h            the same for the firmware build
    input_<i>.npy           the example inputs the firmware runs on
    expected_output_<i>.npy the host runtime's outputs for those inputs

Also a command for build systems (the firmware tests run it at build time)::

    python -m kiln.deploy.prepare --model_name add --out-dir DIR [--board NAME_OR_FILE] [-- kiln-aot flags]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kiln import KilnError
from kiln.boards import BoardFileError
from kiln.deploy.steps import last_error_line, run_logged
from kiln.memory.manifest import Manifest, PoolBudget, describe, pool_budget, write_manifest

logger = logging.getLogger("kiln.deploy")


class DeployError(KilnError):
    """A deployment step failed; ``exit_code`` is what the command line returns."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class PreparedProgram:
    name: str
    pte: Path
    manifest: Manifest
    manifest_json: Path
    memory_header: Path
    inputs: list[Path]
    expected_outputs: list[Path]


def compile_model(model_name: str, pte: Path, intermediates: Path, aot_args: Sequence[str] = (),
                  log: Path | None = None, on_line: Callable[[str], None] | None = None) -> None:
    """Runs kiln-aot (in a child process: torch.export holds on to memory). With ``log``
    its output goes there, and a failure is kiln-aot's own error line."""
    command = [sys.executable, "-m", "kiln.cli.aot", "--model_name", model_name, "--output", str(pte),
               "--intermediates", str(intermediates), *aot_args]
    logger.info("compiling: %s", " ".join(command))
    if log is None:
        code = subprocess.run(command, check=False).returncode
        reason = f"exit code {code} (command: {' '.join(command)})"
    else:
        code = run_logged(command, log, on_line=on_line)
        reason = (last_error_line(log.read_text(errors="replace")) or f"exit code {code}") + f" (log: {log})"
    if code != 0:
        raise DeployError(f"kiln-aot failed: {reason}", code)


def host_outputs(pte: Path, inputs: Sequence[np.ndarray], method: str = "forward") -> list[np.ndarray]:
    """The host runtime's outputs for ``inputs`` (the reference the firmware must match)."""
    from kiln.runtime import Runtime

    outputs = Runtime.get().load_program(pte).load_method(method).execute(list(inputs))
    return [np.asarray(o) for o in outputs]


def prepare_program(model_name: str, out_dir: str | Path, name: str | None = None,
                    aot_args: Sequence[str] = (), sram_bytes: int | None = None,
                    intermediates: Path | None = None, log: Path | None = None,
                    on_line: Callable[[str], None] | None = None, board: PoolBudget | None = None) -> PreparedProgram:
    """Compiles ``model_name`` and writes everything the firmware embeds into ``out_dir``
    (kiln-aot's intermediates into ``intermediates``, default ``out_dir/intermediates``;
    its output into ``log`` if given); the memory manifest places the pools in ``board``'s
    memory (default: the default board's, corstone-300), with ``sram_bytes`` of SRAM if given."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = name or Path(model_name.split(":")[-1]).stem
    pte = out / f"{name}.pte"
    intermediates = intermediates if intermediates is not None else out / "intermediates"
    compile_model(model_name, pte, intermediates, aot_args, log, on_line)

    input_paths = sorted(intermediates.glob("input_*.npy"), key=lambda p: int(p.stem.split("_")[1]))
    if not input_paths:
        raise DeployError(f"kiln-aot wrote no example inputs into {intermediates}")
    inputs = [np.load(p) for p in input_paths]
    embedded_inputs = []
    for i, path in enumerate(input_paths):
        target = out / f"input_{i}.npy"
        if path.resolve() != target.resolve():  # ExecuTorch's learning path: --intermediates = --output
            shutil.copyfile(path, target)
        embedded_inputs.append(target)

    board = board if board is not None else pool_budget()
    if sram_bytes is not None:
        board = PoolBudget(board.name, sram_bytes, board.ddr_bytes)
    manifest = write_manifest(pte, out, inputs=inputs, board=board)
    expected = []
    for i, array in enumerate(host_outputs(pte, inputs)):
        target = out / f"expected_output_{i}.npy"
        np.save(target, np.ascontiguousarray(array))
        expected.append(target)
    json_path = out / f"{name}.manifest.json"
    header_path = out / f"{name}_memory.h"
    return PreparedProgram(name, pte, manifest, json_path, header_path, embedded_inputs, expected)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kiln.deploy.prepare",
        description="Compile a model and write the program, its memory manifest, inputs and host outputs.")
    parser.add_argument("--model_name", "-m", required=True)
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--name", help="file stem (default: the model's name)")
    parser.add_argument("--board", metavar="NAME_OR_FILE",
                        help="the board the memory manifest places the pools on: a shipped board's name or a "
                             "board file (default: corstone-300)")
    parser.add_argument("--sram-bytes", type=int, help="SRAM budget for the memory manifest (default: the board's)")
    parser.add_argument("aot_args", nargs="*", help="extra kiln-aot flags, after --")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        prepared = prepare_program(args.model_name, args.out_dir, args.name, args.aot_args, args.sram_bytes,
                                   board=pool_budget(args.board))
    except (DeployError, BoardFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    print(describe(prepared.manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
