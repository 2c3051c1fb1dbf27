"""Runs inside ExecuTorch's venv (KILN_EXECUTORCH_PYTHON): ExecuTorch's runtime (with its
XnnpackBackend) runs every program of a folder, the independent judge of Kiln's programs.

    run FOLDER

For each ``NAME.pte`` with ``NAME_inputs.npz`` (arrays in0, in1, ...) it writes
``NAME_outputs.npz`` (out0, ...), or ``NAME_error.txt`` if loading or running fails.
One process for all programs: importing ExecuTorch takes seconds.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import numpy as np
import torch


def run_folder(folder: Path) -> int:
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    for program_path in sorted(folder.glob("*.pte")):
        name = program_path.stem
        arrays = np.load(folder / f"{name}_inputs.npz")
        inputs = [torch.from_numpy(arrays[f"in{index}"]) for index in range(len(arrays.files))]
        try:
            method = runtime.load_program(program_path).load_method("forward")
            outputs = method.execute(inputs)
        except Exception:  # report it to the test, which names the program
            (folder / f"{name}_error.txt").write_text(traceback.format_exc())
            continue
        np.savez(folder / f"{name}_outputs.npz", **{f"out{i}": o.numpy() for i, o in enumerate(outputs)})
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "run":
        return run_folder(Path(argv[1]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
