"""Instruction counts of the Cortex-M int8 kernels (kernels/cortex_m) on QEMU's Cortex-M55.

    python benchmarks/cortex_m.py [--work-dir DIR] [--models pointwise,zoo_mv2,...]
                                  [--flavours mve,dsp,portable,m4-dsp,m33-dsp] [--no-kiln-int8]

The programs are ExecuTorch 1.5.1's Cortex-M flow (`aot_arm_compiler --target cortex-m55
-q`: CortexMQuantizer, cortex_m:: operators), made in its venv (KILN_EXECUTORCH_PYTHON) by
tests/python/cortex_m/executorch_cortex_m_programs.py: single layers sized like mv2's
(pointwise, conv3x3, depthwise, linear) and Kiln's zoo mv2, dscnn and resnet-8. Each runs
in one Cortex-M55 firmware (mps3-an547, -icount shift=0) per kernel flavour: Helium (MVE),
the DSP extension (SIMD32) and portable C++, all on the same core; m4-dsp and m33-dsp run
the DSP flavour on a Cortex-M4 (mps2-an386) and a Cortex-M33 (mps2-an505). The firmware checks its
outputs against ExecuTorch's reference outputs ("exact" column). For comparison, mv2 also
runs as Kiln's own int8 path without these kernels (`kiln-aot --quantize`: q/dq around
float portable kernels).

QEMU counts instructions, not cycles: the tables say instructions (per inference, and per
multiply-accumulate of the conv, depthwise and linear operators).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


from kiln.deploy.cortex_m import FLAVOURS, TARGETS, build_and_run, prepare_existing
from kiln.deploy.firmware import build_firmware, locate_sources
from kiln.deploy.firmware_log import parse_firmware_log
from kiln.deploy.prepare import prepare_program
from kiln.deploy.qemu import run_firmware

ROOT = Path(__file__).resolve().parents[1]

MAKER = ROOT / "tests" / "python" / "cortex_m" / "executorch_cortex_m_programs.py"
DEFAULT_MODELS = ("pointwise", "conv3x3", "depthwise", "linear", "zoo_dscnn", "zoo_resnet8", "zoo_mv2")
#: The firmware's per-operator table: name, calls, ticks, ~instructions.
_OPERATOR_LINE = re.compile(r"^I \[runner\]\s+(\S+::\S+)\s+(\d+)\s+(\d+)\s+(\d+)")


@dataclass
class Run:
    """One program on one flavour."""

    instructions: int | None
    exact: bool
    operators: dict[str, int] = field(default_factory=dict)  # name without ".out": ~instructions


def make_programs(folder: Path, models: list[str]) -> None:
    """ExecuTorch's programs for ``models`` not yet in ``folder``."""
    missing = [m for m in models if not (folder / f"{m}.pte").exists()]
    if not missing:
        return
    python = os.environ.get("KILN_EXECUTORCH_PYTHON")
    if not python:
        sys.exit("set KILN_EXECUTORCH_PYTHON to the ExecuTorch venv's python (tools/setup_executorch.sh)")
    print(f"making ExecuTorch Cortex-M programs: {', '.join(missing)}", flush=True)
    subprocess.run([python, str(MAKER), str(folder), "--models", ",".join(missing)], check=True,
                   stdout=subprocess.DEVNULL)


def run_program(folder: Path, name: str, flavour: str, work: Path) -> Run:
    inputs = sorted(folder.glob(f"{name}_input_*.npy"))
    expected = sorted(folder.glob(f"{name}_expected_*.npy"))
    board = TARGETS[flavour].board
    prepared = prepare_existing(folder / f"{name}.pte", inputs, expected, work / "programs" / board.name / name, board)
    run = build_and_run(prepared, flavour, work / f"firmware_{flavour}", timeout=1800)
    return _as_run(run.result.output, run.result.exit_code)


def _as_run(output: str, exit_code: int) -> Run:
    log = parse_firmware_log(output)
    operators = {}
    for line in output.splitlines():
        if match := _OPERATOR_LINE.match(line.strip()):
            operators[match.group(1).removesuffix(".out")] = int(match.group(4))
    return Run(log.inference_instructions, exit_code == 0, operators)


def run_kiln_int8(model: str, work: Path) -> Run:
    """Kiln's own int8 program (kiln-aot --quantize, portable kernels) on the same firmware."""
    prepared = prepare_program(model, work / "kiln_int8" / model, aot_args=["--quantize"])
    elf = build_firmware(prepared, work / "firmware_kiln_int8", locate_sources(),
                         work / "firmware_kiln_int8" / "build.log", cpu="cortex-m55", selective=True)
    result = run_firmware(elf, timeout=3600)
    return _as_run(result.output, result.exit_code)


def _count(value: int | None) -> str:
    return f"{value:,}" if value is not None else "-"


def print_tables(folder: Path, models: list[str], flavours: list[str], runs: dict[tuple[str, str], Run],
                 kiln_int8: Run | None) -> None:
    machines = ", ".join(f"{f} on {TARGETS[f].machine} ({TARGETS[f].cpu})" for f in flavours)
    print(f"\nInstructions per inference (QEMU -icount shift=0: instructions, not cycles; {machines})")
    header = f"{'program':<14}" + "".join(f"{f:>16}" for f in flavours) + f"{'exact':>8}"
    if "mve" in flavours and "portable" in flavours:
        header += f"{'portable/mve':>14}"
    print(header)
    for model in models:
        row = f"{model:<14}" + "".join(f"{_count(runs[model, f].instructions):>16}" for f in flavours)
        row += f"{'yes' if all(runs[model, f].exact for f in flavours) else 'NO':>8}"
        if "mve" in flavours and "portable" in flavours and runs[model, "mve"].instructions:
            row += f"{runs[model, 'portable'].instructions / runs[model, 'mve'].instructions:>13.1f}x"
        print(row)
    if kiln_int8 is not None and "zoo_mv2" in models:
        mve = runs.get(("zoo_mv2", "mve"))
        ratio = (f", {kiln_int8.instructions / mve.instructions:.1f}x the MVE kernels'"
                 if mve and mve.instructions and kiln_int8.instructions else "")
        print(f"{'mv2, kiln-aot --quantize (q/dq + float portable kernels)':<60}"
              f"{_count(kiln_int8.instructions):>16}{ratio}")

    print("\nInstructions per multiply-accumulate, per operator (all its calls in the program)")
    print(f"{'program':<14}{'operator':<36}{'MACs':>14}" + "".join(f"{f:>10}" for f in flavours))
    for model in models:
        macs = json.loads((folder / f"{model}_macs.json").read_text())
        for op, count in sorted(macs.items()):
            cells = []
            for flavour in flavours:
                instructions = runs[model, flavour].operators.get(op)
                cells.append(f"{instructions / count:>10.3f}" if instructions and count else f"{'-':>10}")
            print(f"{model:<14}{op:<36}{count:>14,}" + "".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work-dir", type=Path, help="programs and firmware builds (default: a temporary folder)")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--flavours", default=",".join(FLAVOURS),
                        help=f"of {', '.join(TARGETS)} (m4-dsp, m33-dsp: the DSP flavour on a Cortex-M4 / M33)")
    parser.add_argument("--no-kiln-int8", action="store_true", help="skip mv2 on Kiln's own int8 path")
    args = parser.parse_args()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="kiln_cortex_m_"))
    models = args.models.split(",")
    flavours = args.flavours.split(",")
    folder = work / "executorch"
    folder.mkdir(parents=True, exist_ok=True)
    make_programs(folder, models)
    runs = {}
    for flavour in flavours:
        for model in models:
            print(f"running {model} with {flavour} kernels", flush=True)
            runs[model, flavour] = run_program(folder, model, flavour, work)
    kiln_int8 = None if args.no_kiln_int8 or "zoo_mv2" not in models else run_kiln_int8("mv2", work)
    print_tables(folder, models, flavours, runs, kiln_int8)


if __name__ == "__main__":
    main()
