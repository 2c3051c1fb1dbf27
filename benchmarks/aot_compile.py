"""Ahead-of-time compile time: float model -> int8 -> Ethos-U delegated .pte, Kiln vs ExecuTorch.

    python benchmarks/aot_compile.py [--model mv2] [--target ethos-u55-128]
                                     [--calibration_samples 1] [--executorch-python PATH]

Both tools start from the same float model and calibration samples, in one run on this
machine; imports are done before each clock starts (ExecuTorch runs in its own venv,
tools/setup_executorch.sh, as a subprocess: executorch_arm_compile.py). Prints a table
of stage times and the ratio Kiln / ExecuTorch (goal: <= 0.25). The tools run different
Vela versions (each its own pin: Kiln 5.2.0, ExecuTorch's Arm flow 5.1.0) and ExecuTorch with
aot_arm_compiler's verbose Vela flags; the table says which, with each row.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import tempfile
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import torch

import kiln
import kiln.models

GOAL_RATIO = 0.25


def _import_kiln_compile_path() -> None:
    """Imports every module the Kiln flow uses, so that import time is not measured."""
    import ethosu.regor  # noqa: F401
    import tosa_serializer  # noqa: F401
    import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401

    import kiln.backends.arm.backend  # noqa: F401
    import kiln.backends.arm.payload  # noqa: F401
    import kiln.backends.arm.tosa  # noqa: F401
    import kiln.backends.arm.vela  # noqa: F401
    import kiln.quantize  # noqa: F401
    from kiln.backends.arm.partitioner import EthosUPartitioner  # noqa: F401
    from kiln.backends.arm.quantizer import EthosUQuantizer  # noqa: F401
    from kiln.backends.arm.tosa.ops import load_all

    load_all()


def calibration_samples(inputs: tuple[torch.Tensor, ...], count: int) -> list[tuple[torch.Tensor, ...]]:
    from kiln.cli.aot import calibration_samples as make

    return make(inputs, count)


def measure_kiln(model, inputs, samples, target: str, output: Path) -> tuple[dict[str, float], float, int, str]:
    from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
    from kiln.backends.arm.partitioner import EthosUPartitioner

    stages: dict[str, float] = {}
    start = clock = time.perf_counter()
    spec = EthosUCompileSpec(target)
    quantized = kiln.quantize(model, inputs, EthosUQuantizer(spec), samples, progress=False)
    stages["quantize (export, prepare, calibrate, convert, export)"] = time.perf_counter() - clock
    clock = time.perf_counter()
    program = kiln.export(quantized, partitioner=EthosUPartitioner(spec))
    stages["partition + TOSA + Vela + lower + plan"] = time.perf_counter() - clock
    clock = time.perf_counter()
    data = program.to_bytes()
    stages["serialize"] = time.perf_counter() - clock
    total = time.perf_counter() - start
    output.write_bytes(data)
    report = program.compile_report
    delegated = f"{report.partition_report.delegated_nodes} delegated / {report.partition_report.cpu_nodes} CPU"
    return stages, total, len(data), delegated


def measure_executorch(python: str, model, inputs, samples, target: str, workdir: Path) -> dict:
    torch.export.save(torch.export.export(model, inputs), workdir / "model.pt2")
    files = []
    for index, sample in enumerate(samples):
        if len(sample) != 1:
            raise SystemExit("the ExecuTorch worker takes single-input models")
        np.save(workdir / f"sample_{index}.npy", sample[0].numpy())
        files.append(str(workdir / f"sample_{index}.npy"))
    script = Path(__file__).with_name("executorch_arm_compile.py")
    result = subprocess.run(
        [python, str(script), str(workdir / "model.pt2"), str(workdir / "executorch.pte"), *files,
         "--target", target],
        capture_output=True, text=True, timeout=1800,
    )
    if result.returncode != 0:
        raise SystemExit(f"ExecuTorch's flow failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="mv2", choices=kiln.models.names())
    parser.add_argument("--target", default="ethos-u55-128")
    parser.add_argument("--calibration_samples", type=int, default=1,
                        help="inputs to calibrate on, the same for both tools (default: %(default)s, "
                             "as aot_arm_compiler without --calibration_data)")
    parser.add_argument("--executorch-python", default=os.environ.get("KILN_EXECUTORCH_PYTHON", ""))
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)

    model, inputs = kiln.models.get(args.model)
    samples = calibration_samples(inputs, args.calibration_samples)
    _import_kiln_compile_path()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        stages, kiln_total, kiln_bytes, delegated = measure_kiln(model, inputs, samples, args.target,
                                                                 workdir / "kiln.pte")
        executorch = None
        if args.executorch_python and Path(args.executorch_python).is_file():
            executorch = measure_executorch(args.executorch_python, model, inputs, samples, args.target, workdir)

    print(f"{args.model} float -> int8 -> {args.target} .pte, {args.calibration_samples} calibration "
          f"sample(s), {os.cpu_count()} cores, imports excluded")
    vela_kiln = metadata.version("ethos-u-vela")
    vela_executorch = executorch.get("vela", "?") if executorch is not None else None
    print(f"Kiln: ethos-u-vela {vela_kiln} in-process (regor), Vela's default options")
    if executorch is not None:
        # The two tools do not run the same Vela: the comparison includes that difference.
        print(f"ExecuTorch: ethos-u-vela {vela_executorch} in its own venv, Vela flags "
              f"{' '.join(executorch.get('vela_flags', [])) or '(none)'} (as aot_arm_compiler passes them; "
              "the report they print is timed, then discarded)")
    print(f"{'tool':<24} {'stage':<52} {'seconds':>8}")
    kiln_label = f"Kiln (Vela {vela_kiln})"
    for name, seconds in stages.items():
        print(f"{kiln_label:<24} {name:<52} {seconds:>8.2f}")
    print(f"{kiln_label:<24} {'total (' + delegated + f', {kiln_bytes:,} B)':<52} {kiln_total:>8.2f}")
    if executorch is None:
        print("ExecuTorch: not measured (set --executorch-python or KILN_EXECUTORCH_PYTHON)")
        return
    executorch_label = f"ExecuTorch (Vela {vela_executorch})"
    for name, seconds in executorch["stages"].items():
        print(f"{executorch_label:<24} {name:<52} {seconds:>8.2f}")
    print(f"{executorch_label:<24} {'total (' + format(executorch['bytes'], ',') + ' B)':<52} "
          f"{executorch['total']:>8.2f}")
    ratio = kiln_total / executorch["total"]
    verdict = "meets" if ratio <= GOAL_RATIO else "misses"
    print(f"ratio Kiln / ExecuTorch = {ratio:.3f} ({verdict} the goal <= {GOAL_RATIO})")


if __name__ == "__main__":
    main()
