"""Runs inside the ExecuTorch 1.5.1 venv (never imports kiln): ExecuTorch's Arm Ethos-U
flow on one float model for several targets, and what its partitioner delegated.

Usage: python executorch_arm_coverage.py MODEL.pt2 OUT_DIR SAMPLE_0.npz ... --targets T1,T2

Each SAMPLE_i.npz holds one calibration sample (arrays ``input_0``, ``input_1``, ...; the
first is also the example input). The flow is the one ``aot_arm_compiler`` runs: its
quantizer from the compile spec (symmetric, per-channel weights), calibration,
``to_edge_transform_and_lower`` with its partitioner, ``to_executorch``. For each target
it writes OUT_DIR/<target>.pte and prints one JSON line: {"target", "delegated_nodes",
"cpu_nodes", "cpu_compute_nodes", "delegates", "bytes"} or {"target", "error"}.
Nodes are counted as Kiln's partition report counts them: every call_function node of
the quantized graph but getitem (delegated: inside a lowered module; CPU: outside).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import operator
from pathlib import Path

import numpy as np
import torch


def _operator_nodes(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    return [n for n in graph.nodes if n.op == "call_function" and n.target is not operator.getitem]


def _count(edge) -> dict[str, int]:
    """Delegated nodes, CPU nodes, CPU nodes other than quantize/dequantize, and
    delegates of a lowered edge program."""
    from executorch.exir.lowered_backend_module import LoweredBackendModule

    program = edge.exported_program()
    counts = {"delegated_nodes": 0, "cpu_nodes": 0, "cpu_compute_nodes": 0, "delegates": 0}
    for node in _operator_nodes(program.graph):
        if "executorch_call_delegate" in str(node.target):
            counts["delegates"] += 1
            lowered = getattr(program.graph_module, node.args[0].target)
            assert isinstance(lowered, LoweredBackendModule)
            counts["delegated_nodes"] += len(_operator_nodes(lowered.original_module.graph))
        else:
            counts["cpu_nodes"] += 1
            counts["cpu_compute_nodes"] += "quantize_per_" not in str(node.target)
    return counts


def compile_for(target: str, model: torch.nn.Module, samples: list[tuple[torch.Tensor, ...]], out: Path) -> dict:
    from executorch.backends.arm.ethosu import EthosUCompileSpec
    from executorch.backends.arm.quantizer import get_symmetric_quantization_config
    from executorch.backends.arm.util._factory import create_partitioner, create_quantizer
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    inputs = samples[0]
    spec = EthosUCompileSpec(target)
    quantizer = create_quantizer(spec)
    quantizer.set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(torch.export.export(model, inputs, strict=False).module(check_guards=False), quantizer)
    for sample in samples:
        prepared(*sample)
    quantized = torch.export.export(convert_pt2e(prepared), inputs, strict=False)
    with contextlib.redirect_stdout(io.StringIO()):  # Vela's report
        edge = to_edge_transform_and_lower(
            quantized, partitioner=[create_partitioner(spec)], compile_config=EdgeCompileConfig(_check_ir_validity=False)
        )
    counts = _count(edge)
    data = edge.to_executorch(config=ExecutorchBackendConfig(extract_delegate_segments=False)).buffer
    (out / f"{target}.pte").write_bytes(data)
    return {"target": target, **counts, "bytes": len(data)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pt2", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("samples", type=Path, nargs="+")
    parser.add_argument("--targets", default="ethos-u55-128")
    args = parser.parse_args()
    import executorch.backends.arm.arm_vela  # noqa: F401  (registers the backend)

    model = torch.export.load(str(args.pt2)).module(check_guards=False)
    samples = []
    for path in args.samples:
        with np.load(path) as arrays:
            samples.append(tuple(torch.from_numpy(arrays[f"input_{i}"]) for i in range(len(arrays.files))))
    args.out.mkdir(parents=True, exist_ok=True)
    for target in args.targets.split(","):
        try:
            result = compile_for(target, model, samples, args.out)
        except Exception as error:  # report the failure per target, keep going
            result = {"target": target, "error": f"{type(error).__name__}: {str(error).strip().splitlines()[0][:300]}"}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
