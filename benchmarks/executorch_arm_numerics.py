"""Runs inside the ExecuTorch 1.5.1 venv (never imports kiln): ExecuTorch's Arm Ethos-U flow on
one float model, with what a numerics comparison needs from it.

Usage: python executorch_arm_numerics.py MODEL.pt2 OUT_DIR --samples S_0.npz ... --evaluate E_0.npz ...
       --targets T1,T2

Each .npz holds one input tuple (``input_0``, ``input_1``, ...); the first calibration sample
is also the example input. The flow is the one ``aot_arm_compiler`` runs (its quantizer
from the compile spec, calibration, ``to_edge_transform_and_lower``, ``to_executorch``); the
model is quantized once, with the first target's spec (every Ethos-U gets the same int8
scheme). It writes OUT_DIR/quantized_<i>.npz with the converted (PT2E) model's outputs on
evaluation input i (``output_0``, ...), OUT_DIR/<target>.pte per target, and prints one JSON
line per target: {"target", "output_scales": [...]} (the step of each output: its last
dequantize) or {"target", "error"}.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

import numpy as np
import torch


def _load(path: str) -> tuple[torch.Tensor, ...]:
    with np.load(path) as arrays:
        return tuple(torch.from_numpy(arrays[f"input_{i}"]) for i in range(len(arrays.files)))


def _output_scales(converted: torch.fx.GraphModule) -> list[float]:
    output = next(n for n in converted.graph.nodes if n.op == "output")
    results = output.args[0] if isinstance(output.args[0], (tuple, list)) else (output.args[0],)
    return [float(r.args[1]) if "dequantize" in str(r.target) else float("nan") for r in results]


def quantize(model: torch.nn.Module, samples: list[tuple[torch.Tensor, ...]], target: str):
    from executorch.backends.arm.ethosu import EthosUCompileSpec
    from executorch.backends.arm.quantizer import get_symmetric_quantization_config
    from executorch.backends.arm.util._factory import create_quantizer
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = create_quantizer(EthosUCompileSpec(target))
    quantizer.set_global(get_symmetric_quantization_config(is_per_channel=True))
    exported = torch.export.export(model, samples[0], strict=False)
    prepared = prepare_pt2e(exported.module(check_guards=False), quantizer)
    for sample in samples:
        prepared(*sample)
    return convert_pt2e(prepared)


def lower(converted: torch.fx.GraphModule, inputs: tuple[torch.Tensor, ...], target: str) -> bytes:
    from executorch.backends.arm.ethosu import EthosUCompileSpec
    from executorch.backends.arm.util._factory import create_partitioner
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge_transform_and_lower

    quantized = torch.export.export(converted, inputs, strict=False)
    with contextlib.redirect_stdout(io.StringIO()):  # Vela's report
        edge = to_edge_transform_and_lower(
            quantized, partitioner=[create_partitioner(EthosUCompileSpec(target))],
            compile_config=EdgeCompileConfig(_check_ir_validity=False),
        )
    return edge.to_executorch(config=ExecutorchBackendConfig(extract_delegate_segments=False)).buffer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pt2", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--samples", nargs="+", required=True)
    parser.add_argument("--evaluate", nargs="+", required=True)
    parser.add_argument("--targets", default="ethos-u55-128")
    args = parser.parse_args()
    import executorch.backends.arm.arm_vela  # noqa: F401  (registers the backend)

    model = torch.export.load(str(args.pt2)).module(check_guards=False)
    samples = [_load(p) for p in args.samples]
    evaluation = [_load(p) for p in args.evaluate]
    args.out.mkdir(parents=True, exist_ok=True)
    targets = args.targets.split(",")
    try:
        converted = quantize(model, samples, targets[0])
        with torch.no_grad():
            for index, inputs in enumerate(evaluation):
                outputs = converted(*inputs)
                outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
                np.savez(args.out / f"quantized_{index}.npz", **{f"output_{k}": o.numpy() for k, o in enumerate(outputs)})
    except Exception as error:
        for target in targets:
            print(json.dumps({"target": target, "error": _describe(error)}), flush=True)
        return
    for target in targets:
        try:
            (args.out / f"{target}.pte").write_bytes(lower(converted, samples[0], target))
            result = {"target": target, "output_scales": _output_scales(converted)}
        except Exception as error:  # report the failure per target, keep going
            result = {"target": target, "error": _describe(error)}
        print(json.dumps(result), flush=True)


def _describe(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error).strip().splitlines()[0][:300] if str(error).strip() else ''}"


if __name__ == "__main__":
    main()
