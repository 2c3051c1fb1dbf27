"""ExecuTorch 1.5.1's side of the runtime-parity interop tests (several methods, dynamic
shapes, state, non-tensor inputs). Runs in the ExecuTorch venv; imports neither kiln
nor pytest. Usage:

    python executorch_peer.py export SPEC.json   # {"methods": {name: "m.pt2"}, "out": "p.pte"}
    python executorch_peer.py run SPEC.json      # {"program": "p.pte", "out_dir": "d",
                                                 #  "calls": [{"method": "forward",
                                                 #             "inputs": [{"npy": "x.npy"},
                                                 #                        {"int": 3}]}]}

``export`` lowers each saved torch.export program with ExecuTorch into one program;
mutable buffers keep their initial values (InitializedMutableBufferPass). ``run``
makes the calls in order on one loaded program (a method keeps its state from call
to call) and writes out_dir/results.json: per call {"outputs": [file or number]} or
{"error": message}; tensors go to out_dir/call<k>_output<i>.npy.
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
    config = ExecutorchBackendConfig(passes=[InitializedMutableBufferPass([""])])
    Path(spec["out"]).write_bytes(to_edge(programs).to_executorch(config).buffer)


def _input(description: dict[str, Any]) -> Any:
    if "npy" in description:
        return torch.from_numpy(np.load(description["npy"]))
    if "int" in description:
        return int(description["int"])
    if "float" in description:
        return float(description["float"])
    return bool(description["bool"])


def _output(value: Any, out_dir: Path, call: int, index: int) -> Any:
    if isinstance(value, torch.Tensor):
        path = out_dir / f"call{call}_output{index}.npy"
        np.save(path, value.numpy())
        return {"npy": str(path)}
    return {"number": value}


def run(spec: dict[str, Any]) -> None:
    from executorch.runtime import Runtime

    out_dir = Path(spec["out_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)
    program = Runtime.get().load_program(spec["program"])
    results = []
    for index, call in enumerate(spec["calls"]):
        try:
            method = program.load_method(call["method"])
            outputs = method.execute([_input(d) for d in call["inputs"]])
        except Exception as error:  # recorded for the caller, which decides
            results.append({"error": f"{type(error).__name__}: {error}"})
            continue
        results.append({"outputs": [_output(v, out_dir, index, i) for i, v in enumerate(outputs)]})
    (out_dir / "results.json").write_text(json.dumps(results))


if __name__ == "__main__":
    command, spec_path = sys.argv[1:3]
    spec = json.loads(Path(spec_path).read_text())
    {"export": export, "run": run}[command](spec)
