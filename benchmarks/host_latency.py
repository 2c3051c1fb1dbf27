"""Host latency of one model: Kiln's runtime vs ExecuTorch's portable runtime vs eager PyTorch.

    python benchmarks/host_latency.py [--model mv2] [--iterations 5] [--executorch-python PATH]

Prints a table of medians (ms) from one run on this machine. ExecuTorch runs in its own
venv (tools/setup_executorch.sh; path from --executorch-python or KILN_EXECUTORCH_PYTHON);
without it, its rows are left out and the table says so.
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


def measure_executorch(python: str, model, inputs, iterations: int, workdir: Path) -> tuple[float, list[float]]:
    torch.export.save(torch.export.export(model, inputs), workdir / "model.pt2")
    files = []
    for i, x in enumerate(inputs):
        np.save(workdir / f"input_{i}.npy", x.numpy())
        files.append(str(workdir / f"input_{i}.npy"))
    script = Path(__file__).with_name("executorch_timing.py")
    result = subprocess.run([python, str(script), str(workdir / "model.pt2"), *files,
                             "--iterations", str(iterations)], check=True, capture_output=True, text=True)
    data = json.loads(result.stdout.strip().splitlines()[-1])
    return data["load_ms"], data["execute_ms"]


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
    parser.add_argument("--model", default="mv2", choices=kiln.models.names())
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--executorch-python", default=os.environ.get("KILN_EXECUTORCH_PYTHON", ""))
    args = parser.parse_args()

    model, inputs = kiln.models.get(args.model)
    rows: list[tuple[str, str, list[float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        load_ms, times = measure_kiln(model, inputs, args.iterations, Path(tmp))
        rows.append(("Kiln portable kernels (1 thread)", f"{load_ms:.2f}", times))
        if args.executorch_python and Path(args.executorch_python).exists():
            load_ms, times = measure_executorch(args.executorch_python, model, inputs, args.iterations, Path(tmp))
            rows.append(("ExecuTorch 1.5.1 portable (1 thread)", f"{load_ms:.2f}", times))
        else:
            print("note: ExecuTorch venv not found (tools/setup_executorch.sh); its row is left out")
    rows.append(("eager PyTorch (1 thread)", "-", measure_eager(model, inputs, args.iterations, 1)))
    rows.append((f"eager PyTorch ({os.cpu_count()} threads)", "-",
                 measure_eager(model, inputs, args.iterations, os.cpu_count() or 1)))

    print(f"\n{args.model}: median of {args.iterations} runs after one warm-up, this machine")
    print(f"| {'runtime':<38} | {'load ms':>9} | {'median ms':>10} | {'min ms':>9} |")
    print(f"|{'-' * 40}|{'-' * 11}|{'-' * 12}|{'-' * 11}|")
    for name, load, times in rows:
        print(f"| {name:<38} | {load:>9} | {statistics.median(times):>10.2f} | {min(times):>9.2f} |")


if __name__ == "__main__":
    main()
