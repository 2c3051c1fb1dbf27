"""Runs inside the ExecuTorch 1.5.1 venv (never imports kiln): ExecuTorch's Arm Ethos-U flow on
one float model for one target, keeping what is needed to check its program on Kiln.

Usage: python executorch_arm_programs.py MODEL.pt2 OUT_DIR --target T [--a16w8] [--cortex-m-qdq]
                                         --samples S_0.npz ...

Each .npz holds one input tuple (``input_0``, ``input_1``, ...); the first sample is also the
example input and the evaluation input. The flow is the one ``aot_arm_compiler`` runs (its
quantizer from the compile spec, calibration, ``to_edge_transform_and_lower``,
``to_executorch``; with ``--a16w8`` its 16-bit activation config,
``get_symmetric_a16w8_quantization_config``, as ``aot_arm_compiler``'s A16W8 mode) with the TOSA graph of every delegate dumped (the compile spec's
intermediates). ``--cortex-m-qdq`` also writes OUT_DIR/program_cortex_m.pte: the same program
with the quantize/dequantize ops left on the CPU replaced by ``cortex_m::`` ones, as
``aot_arm_compiler`` does for Ethos-U targets (its ``ReplaceQuantNodesPass``, int8 and int16).
Writes OUT_DIR/program.pte, OUT_DIR/tosa/*.tosa (one per delegate),
OUT_DIR/quantized.npz (the converted PT2E model's outputs on the first sample,
``output_0``, ...), OUT_DIR/quantized.pt2 (the quantized model as ExecuTorch lowers it:
the converted model, exported) and prints one JSON line: {"target", "seconds": {"quantize", "lower"},
"output_scales", "tosa": [file names in delegate order]} or {"target", "error"}.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import time
from pathlib import Path

import numpy as np
import torch


def _load(path: str) -> tuple[torch.Tensor, ...]:
    with np.load(path) as arrays:
        return tuple(torch.from_numpy(arrays[f"input_{i}"]) for i in range(len(arrays.files)))


def _output_scales(converted: torch.fx.GraphModule) -> list[float]:
    output = next(n for n in converted.graph.nodes if n.op == "output")
    results = output.args[0] if isinstance(output.args[0], (tuple, list)) else (output.args[0],)
    return [float(r.args[1]) if isinstance(r, torch.fx.Node) and "dequantize" in str(r.target) else float("nan")
            for r in results]


def _export(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> torch.export.ExportedProgram:
    """Strict first (a padding mask built from a lengths input exports only strictly)."""
    try:
        return torch.export.export(model, inputs, strict=True)
    except Exception:  # noqa: BLE001 - the non-strict export decides
        return torch.export.export(model, inputs, strict=False)


def _tag_order(name: str) -> int:
    """ExecuTorch names a delegate's TOSA file after its partition tag (``output_tag3_...``)."""
    found = re.search(r"tag(\d+)", name)
    return int(found.group(1)) if found else -1


def compile_program(pt2: Path, out: Path, target: str, samples: list[tuple[torch.Tensor, ...]],
                    a16w8: bool = False, cortex_m_qdq: bool = False) -> dict:
    import executorch.backends.arm.arm_vela  # noqa: F401  (registers the backend)
    from executorch.backends.arm.ethosu import EthosUCompileSpec
    from executorch.backends.arm.quantizer import (
        get_symmetric_a16w8_quantization_config,
        get_symmetric_quantization_config,
    )
    from executorch.backends.arm.util._factory import create_partitioner, create_quantizer
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    model = torch.export.load(str(pt2)).module(check_guards=False)
    start = time.perf_counter()
    quantizer = create_quantizer(EthosUCompileSpec(target))
    config = get_symmetric_a16w8_quantization_config if a16w8 else get_symmetric_quantization_config
    quantizer.set_global(config(is_per_channel=True))
    exported = _export(model, samples[0])
    prepared = prepare_pt2e(exported.module(check_guards=False), quantizer)
    for sample in samples:
        prepared(*sample)
    converted = convert_pt2e(prepared)
    with torch.no_grad():
        outputs = converted(*samples[0])
    outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    np.savez(out / "quantized.npz", **{f"output_{k}": o.numpy() for k, o in enumerate(outputs)})
    quantized = _export(converted, samples[0])
    quantize_seconds = time.perf_counter() - start
    torch.export.save(quantized, str(out / "quantized.pt2"))  # for lowering the same model elsewhere

    start = time.perf_counter()
    spec = EthosUCompileSpec(target)
    spec.dump_intermediate_artifacts_to(str(out / "tosa"))
    with contextlib.redirect_stdout(io.StringIO()):  # Vela's report
        edge = to_edge_transform_and_lower(
            quantized, partitioner=[create_partitioner(spec)],
            compile_config=EdgeCompileConfig(_check_ir_validity=False),
        )
    config = ExecutorchBackendConfig(extract_delegate_segments=False)
    if cortex_m_qdq:
        from executorch.backends.cortex_m.passes.replace_quant_nodes_pass import ReplaceQuantNodesPass

        replaced = edge.transform([ReplaceQuantNodesPass()])  # a copy
        (out / "program_cortex_m.pte").write_bytes(replaced.to_executorch(config=config).buffer)
    program = edge.to_executorch(config=config)
    (out / "program.pte").write_bytes(program.buffer)
    lower_seconds = time.perf_counter() - start
    tosa = sorted((p.name for p in (out / "tosa").glob("output_tag*.tosa")), key=_tag_order)
    return {"target": target, "seconds": {"quantize": quantize_seconds, "lower": lower_seconds},
            "output_scales": _output_scales(converted), "tosa": tosa}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pt2", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--target", default="ethos-u55-128")
    parser.add_argument("--a16w8", action="store_true", help="16-bit activations, int8 weights")
    parser.add_argument("--cortex-m-qdq", action="store_true",
                        help="also write program_cortex_m.pte (cortex_m:: quantize/dequantize on the CPU)")
    parser.add_argument("--samples", nargs="+", required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        result = compile_program(args.pt2, args.out, args.target, [_load(p) for p in args.samples],
                                 a16w8=args.a16w8, cortex_m_qdq=args.cortex_m_qdq)
    except Exception as error:  # reported to the caller as data
        text = str(error).strip()
        result = {"target": args.target, "error": f"{type(error).__name__}: {text.splitlines()[0][:300] if text else ''}"}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
