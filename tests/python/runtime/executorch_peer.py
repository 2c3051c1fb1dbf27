"""ExecuTorch 1.5.1's side of the runtime-parity interop tests (several methods, dynamic
shapes, state, non-tensor inputs). Runs in the ExecuTorch venv; imports neither kiln
nor pytest. Everything happens in one process (importing ExecuTorch takes most of the
time):

    python executorch_peer.py BATCH.json

    {"exports": [{"methods": {"forward": "f.pt2", "reset": "r.pt2"}, "out": "p.pte",
                  "initial_values": true}],
     "runs": [{"program": "k.pte", "out_dir": "d",
               "calls": [{"method": "forward", "inputs": [{"npy": "x.npy"}, {"int": 3}]}]}]}

Each export lowers saved torch.export programs with ExecuTorch into one program, the
mutable buffers keeping their initial values (InitializedMutableBufferPass) unless
"initial_values" is false (ExecuTorch's default: the program stores none). Each run
makes its calls in order on one loaded program (a method keeps its state from call to
call) and writes out_dir/results.json: per call {"outputs": [{"npy": file} or
{"number": n}]} or {"error": message}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch


def export(spec: dict[str, Any]) -> None:
    from executorch.exir import ExecutorchBackendConfig, to_edge
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    programs = {name: torch.export.load(path) for name, path in spec["methods"].items()}
    # "" is in every name: every mutated buffer keeps its initial value.
    keep_initial_values = spec.get("initial_values", True)
    config = ExecutorchBackendConfig(passes=[InitializedMutableBufferPass([""])] if keep_initial_values else [])
    Path(spec["out"]).write_bytes(to_edge(programs).to_executorch(config).buffer)


def _input(description: dict[str, Any]) -> Any:
    if "npy" in description:
        return torch.from_numpy(np.load(description["npy"]))
    if "int" in description:
        return int(description["int"])
    if "float" in description:
        return float(description["float"])
    return bool(description["bool"])


def _output(value: Any, out_dir: Path, call: int, index: int) -> dict[str, Any]:
    if isinstance(value, torch.Tensor):
        path = out_dir / f"call{call}_output{index}.npy"
        np.save(path, value.numpy())
        return {"npy": str(path)}
    return {"number": value}


def run(spec: dict[str, Any]) -> None:
    from executorch.runtime import Runtime

    out_dir = Path(spec["out_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    try:
        program = Runtime.get().load_program(spec["program"])
    except Exception as error:  # recorded for the caller, which decides
        results = [{"error": f"{type(error).__name__}: {error}"} for _ in spec["calls"]]
    else:
        for index, call in enumerate(spec["calls"]):
            try:
                outputs = program.load_method(call["method"]).execute([_input(d) for d in call["inputs"]])
            except Exception as error:
                results.append({"error": f"{type(error).__name__}: {error}"})
                continue
            results.append({"outputs": [_output(v, out_dir, index, i) for i, v in enumerate(outputs)]})
    (out_dir / "results.json").write_text(json.dumps(results))


if __name__ == "__main__":
    batch = json.loads(Path(sys.argv[1]).read_text())
    for export_spec in batch.get("exports", []):
        export(export_spec)
    for run_spec in batch.get("runs", []):
        run(run_spec)
