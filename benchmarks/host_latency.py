"""Host latency: Kiln's runtime vs ExecuTorch's runtime vs eager PyTorch, portable and XNNPACK.

    python benchmarks/host_latency.py [--model mv2 [smallcnn ...]] [--iterations 5]
                                      [--executorch-python PATH] [--no-xnnpack]

Prints one table of medians (ms) per model from one run on this machine: Kiln's portable
kernels, ExecuTorch's portable runtime, eager PyTorch, and (unless --no-xnnpack) for fp32
and int8: Kiln + XNNPACK (1 and 2 threads) on Kiln's XNNPACK program and on ExecuTorch's
XNNPACK program of the same model, and ExecuTorch's runtime on its own XNNPACK program.
ExecuTorch runs in its own venv (tools/setup_executorch.sh; path from --executorch-python
or KILN_EXECUTORCH_PYTHON); without it, its rows are left out and the table says so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

import kiln
import kiln.models
from kiln.runtime import Runtime

Row = tuple[str, str, list[float]]  # (label, load ms or "-", execute times in ms)


def _time(fn, iterations: int) -> list[float]:
    fn()  # warm-up
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def measure_kiln(model, inputs, iterations: int, workdir: Path) -> tuple[float, list[float]]:
    path = workdir / "kiln.pte"
    kiln.export(model, inputs).save(path)
    start = time.perf_counter()
    method = Runtime().load_program(path).load_method("forward")
    load_ms = (time.perf_counter() - start) * 1e3
    return load_ms, _time(lambda: method.execute(list(inputs)), iterations)


def measure_kiln_program(path: Path, inputs, iterations: int, threads: int) -> tuple[float, list[float]]:
    start = time.perf_counter()
    method = Runtime().load_program(path).load_method("forward", threads=threads)
    load_ms = (time.perf_counter() - start) * 1e3
    return load_ms, _time(lambda: method.execute(list(inputs)), iterations)


def measure_executorch(python: str, model, inputs, iterations: int, workdir: Path, *, xnnpack: str = "",
                       threads: int = 1, save: Path | None = None) -> tuple[float, list[float]]:
    if not (workdir / "model.pt2").exists():
        torch.export.save(torch.export.export(model, inputs), workdir / "model.pt2")
    files = []
    for i, x in enumerate(inputs):
        np.save(workdir / f"input_{i}.npy", x.numpy())
        files.append(str(workdir / f"input_{i}.npy"))
    script = Path(__file__).with_name("executorch_timing.py")
    extra = ["--xnnpack", xnnpack, "--threads", str(threads)] if xnnpack else []
    extra += ["--save", str(save)] if save is not None else []
    result = subprocess.run([python, str(script), str(workdir / "model.pt2"), *files,
                             "--iterations", str(iterations), *extra], check=True, capture_output=True, text=True)
    data = json.loads(result.stdout.strip().splitlines()[-1])
    return data["load_ms"], data["execute_ms"]


def kiln_xnnpack_program(model, inputs, flavour: str, path: Path) -> Path:
    from kiln.backends.xnnpack import XnnpackPartitioner, XnnpackQuantizer

    source = model if flavour == "fp32" else kiln.quantize(model, inputs, XnnpackQuantizer(), [inputs],
                                                           progress=False)
    kiln.export(source, inputs if flavour == "fp32" else None, partitioner=XnnpackPartitioner()).save(path)
    return path


def xnnpack_rows(model, inputs, iterations: int, workdir: Path, executorch_python: str) -> list[Row]:
    """Kiln + XNNPACK on Kiln's and ExecuTorch's XNNPACK programs, ExecuTorch + XNNPACK on its own."""
    rows: list[Row] = []
    for flavour in ("fp32", "int8"):
        kiln_path = kiln_xnnpack_program(model, inputs, flavour, workdir / f"kiln_xnnpack_{flavour}.pte")
        theirs = workdir / f"executorch_xnnpack_{flavour}.pte"
        for threads in (1, 2):
            plural = "thread" if threads == 1 else "threads"
            load_ms, times = measure_kiln_program(kiln_path, inputs, iterations, threads)
            rows.append((f"Kiln + XNNPACK, Kiln's {flavour} program ({threads} {plural})", f"{load_ms:.2f}", times))
            if not executorch_python:
                continue
            load_ms, times = measure_executorch(executorch_python, model, inputs, iterations, workdir,
                                                xnnpack=flavour, threads=threads, save=theirs)
            rows.append((f"ExecuTorch + XNNPACK, its {flavour} program ({threads} {plural})", f"{load_ms:.2f}",
                         times))
            load_ms, times = measure_kiln_program(theirs, inputs, iterations, threads)
            rows.append((f"Kiln + XNNPACK, ExecuTorch's {flavour} program ({threads} {plural})", f"{load_ms:.2f}",
                         times))
    return rows


def measure_eager(model, inputs, iterations: int, threads: int) -> list[float]:
    saved = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with torch.no_grad():
            return _time(lambda: model(*inputs), iterations)
    finally:
        torch.set_num_threads(saved)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", nargs="+", default=["mv2"], choices=kiln.models.names())
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--executorch-python", default=os.environ.get("KILN_EXECUTORCH_PYTHON", ""))
    parser.add_argument("--no-xnnpack", dest="xnnpack", action="store_false", help="leave out the XNNPACK rows")
    args = parser.parse_args()
    if args.executorch_python and not Path(args.executorch_python).exists():
        args.executorch_python = ""
    for name in args.model:
        print_table(name, measure_model(name, args), args.iterations)


def measure_model(name: str, args: argparse.Namespace) -> list[Row]:
    model, inputs = kiln.models.get(name)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        load_ms, times = measure_kiln(model, inputs, args.iterations, Path(tmp))
        rows.append(("Kiln portable kernels (1 thread)", f"{load_ms:.2f}", times))
        if args.executorch_python:
            load_ms, times = measure_executorch(args.executorch_python, model, inputs, args.iterations, Path(tmp))
            rows.append(("ExecuTorch 1.5.1 portable (1 thread)", f"{load_ms:.2f}", times))
        else:
            print("note: ExecuTorch venv not found (tools/setup_executorch.sh); its rows are left out")
        if args.xnnpack:
            rows += xnnpack_rows(model, inputs, args.iterations, Path(tmp), args.executorch_python)
    rows.append(("eager PyTorch (1 thread)", "-", measure_eager(model, inputs, args.iterations, 1)))
    rows.append((f"eager PyTorch ({os.cpu_count()} threads)", "-",
                 measure_eager(model, inputs, args.iterations, os.cpu_count() or 1)))
    return rows


def print_table(name: str, rows: list[Row], iterations: int) -> None:
    width = max(38, *(len(row[0]) for row in rows))
    print(f"\n{name}: median of {iterations} runs after one warm-up, this machine")
    print(f"| {'runtime':<{width}} | {'load ms':>9} | {'median ms':>10} | {'min ms':>9} |")
    print(f"|{'-' * (width + 2)}|{'-' * 11}|{'-' * 12}|{'-' * 11}|")
    for label, load, times in rows:
        print(f"| {label:<{width}} | {load:>9} | {statistics.median(times):>10.2f} | {min(times):>9.2f} |")


if __name__ == "__main__":
    main()
