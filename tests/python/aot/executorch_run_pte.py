"""Run a .pte file with ExecuTorch's runtime (the independent reference).

Executed by the ExecuTorch venv's python as a subprocess; imports neither kiln
nor pytest. Usage:

    python executorch_run_pte.py PROGRAM.pte OUT_DIR INPUT0.npy [INPUT1.npy ...]

Writes OUT_DIR/output{i}.npy for every output, then checks that ExecuTorch's
own deserializer parses the file (exit code 3 if it does not).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch


def main() -> int:
    program_path, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    inputs = [torch.from_numpy(np.load(p)) for p in sys.argv[3:]]

    from executorch.exir._serialize._program import deserialize_pte_binary

    try:
        deserialize_pte_binary(program_path.read_bytes())
    except Exception as error:  # report, do not hide: the caller checks the exit code
        print(f"deserialize_pte_binary failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 3

    from executorch.runtime import Runtime

    method = Runtime.get().load_program(program_path).load_method("forward")
    outputs = method.execute(inputs)
    out_dir.mkdir(parents=True, exist_ok=True)
    for index, output in enumerate(outputs):
        np.save(out_dir / f"output{index}.npy", output.detach().numpy())
    return 0


if __name__ == "__main__":
    sys.exit(main())
