"""Runs inside the ExecuTorch 1.5.1 venv (never imports kiln): times ExecuTorch's runtime.

Usage: python executorch_timing.py MODEL.pt2 INPUT_0.npy ... --iterations N
Exports the torch.export program with ExecuTorch's default (portable) flow, then prints
one JSON line: {"load_ms": ..., "execute_ms": [...]}.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pt2", type=Path)
    parser.add_argument("inputs", type=Path, nargs="+")
    parser.add_argument("--iterations", type=int, default=5)
    args = parser.parse_args()

    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    program = to_edge_transform_and_lower(torch.export.load(str(args.pt2))).to_executorch()
    with tempfile.TemporaryDirectory() as tmp:
        pte = Path(tmp) / "model.pte"
        pte.write_bytes(program.buffer)
        start = time.perf_counter()
        method = Runtime.get().load_program(pte).load_method("forward")
        load_ms = (time.perf_counter() - start) * 1e3
        inputs = [torch.from_numpy(np.load(p)) for p in args.inputs]
        method.execute(inputs)  # warm-up
        times = []
        for _ in range(args.iterations):
            start = time.perf_counter()
            method.execute(inputs)
            times.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({"load_ms": load_ms, "execute_ms": times}))


if __name__ == "__main__":
    main()
