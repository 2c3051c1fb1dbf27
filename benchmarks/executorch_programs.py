"""ExecuTorch's own Ethos-U programs for the public architectures, at full size, on Kiln.

    python benchmarks/executorch_programs.py [--models wav2letter,deit] [--targets ethos-u55-128]
                                             [--reduced] [--a16w8] [--timeout 1800] [--json FILE]
                                             [--executorch-python PATH]

Per model and target: ExecuTorch 1.5.1's Arm flow compiles the model (its venv, a
subprocess: benchmarks/executorch_arm_programs.py), then Kiln runs the .pte. Columns: the
seconds ExecuTorch took (quantize + lower), its delegates, whether the program runs on Kiln,
whether every delegate is bit-exact on the virtual NPU against the TOSA reference model on
ExecuTorch's TOSA graph (two random inputs), and the whole program's largest distance from
ExecuTorch's quantized PyTorch model in output steps. The models are those of
tests/python/arm/vnpu/executorch_programs.py (the test runs them at reduced size; ``--reduced``
here does the same). ``--a16w8``: ExecuTorch's 16-bit activation, int8 weight config
(``get_symmetric_a16w8_quantization_config``) instead of int8; ``--models`` may then also name
the test's small a16w8 models (a16w8_cnn, a16w8_mlp).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python" / "arm" / "vnpu"))

import executorch_programs as programs  # noqa: E402


@dataclass
class Row:
    model: str
    target: str
    executorch_seconds: float = 0.0
    delegates: int = 0
    runs_on_kiln: str = ""
    bit_exact: str = ""
    max_lsb: str = ""
    error: str = ""

    def cells(self) -> list[str]:
        if self.error and not self.delegates:
            return [self.model, self.target, f"{self.executorch_seconds:.0f}", "-", "-", "-", "-", self.error[:70]]
        return [self.model, self.target, f"{self.executorch_seconds:.0f}", str(self.delegates), self.runs_on_kiln,
                self.bit_exact, self.max_lsb, self.error[:70]]


def measure(python: Path, name: str, target: str, folder: Path, full: bool, timeout: float,
            a16w8: bool = False) -> Row:
    program = programs.compile_with_executorch(python, name, target, folder, full=full, timeout=timeout, a16w8=a16w8)
    row = Row(name, target, program.seconds, len(program.tosa), error=program.error)
    if program.error:
        return row
    try:
        differing = programs.delegate_mismatches(program)
        row.bit_exact = "yes" if not any(differing) else f"no {differing}"
    except Exception as error:  # report and keep going
        row.bit_exact, row.error = "error", f"{type(error).__name__}: {error}"
    try:
        distances = programs.program_distance(program)
        row.runs_on_kiln = "yes"
        row.max_lsb = ", ".join(f"{d:.0f}" for d in distances)
    except Exception as error:
        row.runs_on_kiln, row.error = "no", f"{type(error).__name__}: {error}"
    return row


_HEADER = ["model", "target", "ET compile s", "delegates", "runs on Kiln", "bit-exact", "max LSB vs ET model", "note"]


def format_table(rows: list[Row]) -> str:
    table = [_HEADER, *(r.cells() for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(_HEADER))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(programs.MODELS), help="comma-separated")
    parser.add_argument("--targets", default=",".join(programs.TARGETS), help="comma-separated Ethos-U targets")
    parser.add_argument("--reduced", action="store_true", help="the test's reduced sizes")
    parser.add_argument("--a16w8", action="store_true", help="ExecuTorch's 16-bit activation config")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per ExecuTorch compile")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--executorch-python", default=os.environ.get("KILN_EXECUTORCH_PYTHON", ""))
    args = parser.parse_args()
    if not args.executorch_python or not Path(args.executorch_python).is_file():
        parser.error("needs ExecuTorch's venv: --executorch-python or KILN_EXECUTORCH_PYTHON")
    logging.getLogger("torchao").setLevel(logging.ERROR)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models.split(","):
            for target in args.targets.split(","):
                row = measure(Path(args.executorch_python), name, target, Path(folder) / name,
                              not args.reduced, args.timeout, args.a16w8)
                print("  " + " | ".join(row.cells()), file=sys.stderr, flush=True)
                rows.append(row)
    print(format_table(rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
