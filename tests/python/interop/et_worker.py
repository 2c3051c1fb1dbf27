"""Runs inside the ExecuTorch 1.5.1 venv (never imports kiln): the interop peer.

Usage:
  python et_worker.py export MODEL.pt2 OUT.pte    torch.export program -> ExecuTorch .pte
  python et_worker.py run PROGRAM.pte OUT_DIR IN.npy...   run with ExecuTorch's runtime,
                                                          write OUT_DIR/output_<i>.npy
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch


def export(pt2: Path, pte: Path) -> None:
    from executorch.exir import to_edge_transform_and_lower

    exported = torch.export.load(str(pt2))
    program = to_edge_transform_and_lower(exported).to_executorch()
    pte.write_bytes(program.buffer)


def run(pte: Path, out_dir: Path, inputs: list[Path]) -> None:
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte).load_method("forward")
    outputs = method.execute([torch.from_numpy(np.load(p)) for p in inputs])
    out_dir.mkdir(parents=True, exist_ok=True)
    for i, value in enumerate(outputs):
        np.save(out_dir / f"output_{i}.npy", value.numpy())


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "export":
        export(Path(args[0]), Path(args[1]))
    elif command == "run":
        run(Path(args[0]), Path(args[1]), [Path(a) for a in args[2:]])
    else:
        sys.exit(f"unknown command {command!r}")
