"""Runs inside the ExecuTorch 1.5.1 venv (never imports kiln): times ExecuTorch's Arm
Ethos-U compile flow, the same API calls its ``aot_arm_compiler`` makes.

Usage: python executorch_arm_compile.py MODEL.pt2 OUT.pte --target ethos-u55-128 CALIB_0.npy ...
(one .npy per calibration sample, single-input models). Imports happen before the
clock starts. Prints one JSON line: {"stages": {name: seconds}, "total": s, "bytes": n,
"vela": version, "vela_flags": [...]} -- the Vela this venv has and the flags it ran with.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pt2", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("samples", type=Path, nargs="+")
    parser.add_argument("--target", default="ethos-u55-128")
    args = parser.parse_args()

    # Everything the flow imports, imported before timing starts.
    import executorch.backends.arm.arm_vela  # noqa: F401
    from executorch.backends.arm.ethosu import EthosUCompileSpec
    from executorch.backends.arm.quantizer import get_symmetric_quantization_config
    from executorch.backends.arm.util._factory import create_partitioner, create_quantizer
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    loaded = torch.export.load(str(args.pt2))
    samples = [(torch.from_numpy(np.load(p)),) for p in args.samples]
    inputs = samples[0]
    model = loaded.module(check_guards=False)

    stages: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        stages[name] = now - clock
        clock = now

    start = clock
    exported = torch.export.export(model, inputs, strict=False)
    lap("torch.export")
    # As aot_arm_compiler: compile spec with its verbose Vela flags, quantizer from the spec.
    vela_flags = ["--verbose-operators", "--verbose-cycle-estimate"]
    spec = EthosUCompileSpec(args.target, extra_flags=vela_flags)
    quantizer = create_quantizer(spec)
    quantizer.set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(exported.module(check_guards=False), quantizer)
    for sample in samples:
        prepared(*sample)
    converted = convert_pt2e(prepared)
    quantized = torch.export.export(converted, inputs, strict=False)
    lap("quantize (prepare, calibrate, convert, export)")
    with contextlib.redirect_stdout(io.StringIO()):  # Vela's verbose report
        edge = to_edge_transform_and_lower(
            quantized, partitioner=[create_partitioner(spec)],
            compile_config=EdgeCompileConfig(_check_ir_validity=False),
        )
    lap("to_edge + partition + TOSA + Vela")
    program = edge.to_executorch(config=ExecutorchBackendConfig(extract_delegate_segments=False))
    data = program.buffer
    lap("to_executorch + serialize")
    total = time.perf_counter() - start
    args.output.write_bytes(data)
    print(json.dumps({"stages": stages, "total": total, "bytes": len(data),
                      "vela": metadata.version("ethos-u-vela"), "vela_flags": vela_flags}))


if __name__ == "__main__":
    main()
