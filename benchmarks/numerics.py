"""How far each tool's Ethos-U programs are from its own quantized PyTorch model, per zoo model.

    python benchmarks/numerics.py [--models mv2,mv3] [--targets ethos-u55-128,ethos-u85-256]
                                  [--calibration_samples 2] [--evaluation_samples 4]
                                  [--json FILE] [--executorch-python PATH]

Each tool quantizes the same float model on the same calibration samples with its own
Ethos-U quantizer; its quantized PyTorch model (the PT2E converted model, float between its
quantize/dequantize pairs) is the reference for its own program. Both tools' programs run
on Kiln's runtime, their delegates on the virtual NPU (bit-exact with the TOSA reference),
on the same evaluation inputs. The table gives, per output element, the distance to the
reference in output steps (LSB): the largest, the mean, and the share of elements more than
one step away. Goal: Kiln no further from its reference than ExecuTorch from its own.
Kiln's lowering of ExecuTorch's own quantized model computes what ExecuTorch's program
computes (test_delegate_executorch_models.py): the columns differ by the quantizers'
choices, chiefly the activation observer (``--observer minmax`` shows Kiln's former default).

ExecuTorch runs in its own venv as a subprocess (executorch_arm_numerics.py); set
--executorch-python or KILN_EXECUTORCH_PYTHON, else only Kiln's columns are filled.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import torch

import kiln
import kiln.models

DEFAULT_MODELS = ("mv2", "mv3")
DEFAULT_TARGETS = ("ethos-u55-128", "ethos-u85-256")
WORKER = Path(__file__).with_name("executorch_arm_numerics.py")


@dataclass
class Distance:
    """One tool's program against its own quantized model, in output steps."""

    max_lsb: Optional[float] = None
    mean_lsb: Optional[float] = None
    over_one: Optional[float] = None  # share of elements more than one step away
    error: str = ""

    def cells(self) -> list[str]:
        if self.error:
            return ["error", self.error[:50], ""]
        if self.max_lsb is None:
            return ["-", "-", "-"]
        return [f"{self.max_lsb:.0f}", f"{self.mean_lsb:.3f}", f"{100 * self.over_one:.1f}%"]


@dataclass
class Row:
    model: str
    target: str
    kiln: Distance = field(default_factory=Distance)
    executorch: Distance = field(default_factory=Distance)


def distance(got: list[list[np.ndarray]], expected: list[list[np.ndarray]], steps: list[float]) -> Distance:
    """Per-element distances over every evaluation input and output, in each output's step."""
    lsb = np.concatenate([
        (np.abs(np.asarray(g, np.float64) - np.asarray(e, np.float64)) / step).reshape(-1)
        for got_outputs, expected_outputs in zip(got, expected)
        for g, e, step in zip(got_outputs, expected_outputs, steps)
    ])
    rounded = np.round(lsb)  # float noise of the dequantize is far below a step
    return Distance(float(rounded.max()), float(rounded.mean()), float(np.mean(rounded > 1)))


def run_program(program: bytes, evaluation: list[tuple[torch.Tensor, ...]]) -> list[list[np.ndarray]]:
    from kiln.runtime import Runtime

    method = Runtime().load_program(program).load_method("forward")
    return [[np.asarray(o) for o in method.execute([x.numpy() for x in inputs])] for inputs in evaluation]


def output_steps(quantized: torch.export.ExportedProgram) -> list[float]:
    output = next(n for n in reversed(quantized.graph.nodes) if n.op == "output")
    return [float(r.args[1]) for r in output.args[0]]


def kiln_distances(model: torch.nn.Module, inputs, samples, evaluation, targets: list[str],
                   observer: str = "histogram") -> dict[str, Distance]:
    from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
    from kiln.backends.arm.quantizer import get_symmetric_quantization_config

    quantizer = EthosUQuantizer(EthosUCompileSpec(targets[0]))
    quantizer.set_global(get_symmetric_quantization_config(observer=observer))  # type: ignore[arg-type]
    quantized = kiln.quantize(model, inputs, quantizer, samples, progress=False)
    with torch.no_grad():
        expected = [[o.numpy() for o in _as_tuple(quantized.module()(*x))] for x in evaluation]
    found = {}
    for target in targets:
        try:
            program = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
            found[target] = distance(run_program(program.to_bytes(), evaluation), expected, output_steps(quantized))
        except Exception as error:  # report and keep going
            found[target] = Distance(error=f"{type(error).__name__}: {error}")
    return found


def executorch_distances(python: str, model, samples, evaluation, targets: list[str],
                         workdir: Path) -> dict[str, Distance]:
    pt2 = workdir / "model.pt2"
    torch.export.save(torch.export.export(model, samples[0], strict=False), str(pt2))

    def save(kind: str, inputs_list) -> list[str]:
        paths = []
        for i, inputs in enumerate(inputs_list):
            path = workdir / f"{kind}_{i}.npz"
            np.savez(path, **{f"input_{k}": x.numpy() for k, x in enumerate(inputs)})
            paths.append(str(path))
        return paths

    out = workdir / "executorch"
    command = [python, str(WORKER), str(pt2), str(out), "--samples", *save("sample", samples),
               "--evaluate", *save("evaluate", evaluation), "--targets", ",".join(targets)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=7200)
    found: dict[str, Distance] = {}
    for line in result.stdout.splitlines():
        if not line.startswith("{"):
            continue
        data = json.loads(line)
        if "error" in data:
            found[data["target"]] = Distance(error=data["error"])
            continue
        expected = []
        for i in range(len(evaluation)):
            with np.load(out / f"quantized_{i}.npz") as arrays:
                expected.append([arrays[f"output_{k}"] for k in range(len(arrays.files))])
        pte = (out / f"{data['target']}.pte").read_bytes()
        try:
            found[data["target"]] = distance(run_program(pte, evaluation), expected, data["output_scales"])
        except Exception as error:
            found[data["target"]] = Distance(error=f"runs on Kiln: {type(error).__name__}: {error}")
    for target in targets:
        if target not in found:
            tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
            found[target] = Distance(error=f"worker exited {result.returncode}: {tail}")
    return found


def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def measure(names: list[str], targets: list[str], calibration: int, evaluations: int, python: str,
            observer: str = "histogram") -> list[Row]:
    from kiln.cli.aot import calibration_samples

    rows = []
    for name in names:
        model, inputs = kiln.models.get(name)
        samples = calibration_samples(inputs, calibration)
        evaluation = calibration_samples(inputs, evaluations + 1, seed=1)[1:]  # not the calibration inputs
        print(f"{name}: quantizing and compiling ...", file=sys.stderr, flush=True)
        ours = kiln_distances(model, inputs, samples, evaluation, targets, observer)
        model_rows = [Row(name, target, ours[target]) for target in targets]
        if python:
            with tempfile.TemporaryDirectory() as folder:
                theirs = executorch_distances(python, model, samples, evaluation, targets, Path(folder))
            for row in model_rows:
                row.executorch = theirs[row.target]
        for row in model_rows:
            print("  " + " | ".join(_cells(row)), file=sys.stderr, flush=True)
        rows.extend(model_rows)
    return rows


_HEADER = ["model", "target", "Kiln max LSB", "Kiln mean", "Kiln >1 LSB", "ET max LSB", "ET mean", "ET >1 LSB"]


def _cells(row: Row) -> list[str]:
    return [row.model, row.target, *row.kiln.cells(), *row.executorch.cells()]


def format_table(rows: list[Row]) -> str:
    table = [_HEADER, *(_cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(_HEADER))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated zoo models")
    parser.add_argument("--targets", default=",".join(DEFAULT_TARGETS), help="comma-separated Ethos-U targets")
    parser.add_argument("--calibration_samples", type=int, default=2)
    parser.add_argument("--evaluation_samples", type=int, default=4)
    parser.add_argument("--observer", default="histogram", choices=("histogram", "minmax", "moving_average"),
                        help="Kiln's activation observer (the quantizer's default: histogram, as ExecuTorch's)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--executorch-python", default=os.environ.get("KILN_EXECUTORCH_PYTHON", ""))
    args = parser.parse_args()
    logging.getLogger("torchao").setLevel(logging.ERROR)
    logging.getLogger("kiln").setLevel(logging.ERROR)
    python = args.executorch_python if args.executorch_python and Path(args.executorch_python).is_file() else ""
    rows = measure(args.models.split(","), args.targets.split(","), args.calibration_samples,
                   args.evaluation_samples, python, args.observer)
    print(format_table(rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
