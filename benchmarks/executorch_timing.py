"""Runs inside the ExecuTorch 1.5.1 venv (never imports kiln): times ExecuTorch's runtime.

Usage: python executorch_timing.py MODEL.pt2 INPUT_0.npy ... --iterations N
           [--xnnpack fp32|int8 --threads T --save PROGRAM.pte]
Exports the torch.export program with ExecuTorch's default (portable) flow, or with its
XnnpackPartitioner (int8: quantized first with its XNNPACKQuantizer, symmetric per-channel,
calibrated on the inputs), then prints one JSON line: {"load_ms": ..., "execute_ms": [...]}.
``--save`` keeps the program (for Kiln's runtime to run the same file); ``--threads`` sizes
the runtime's thread pool (XNNPACK's workers).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np
import torch


def _quantized(exported: torch.export.ExportedProgram, inputs: list[torch.Tensor]) -> torch.export.ExportedProgram:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(exported.module(check_guards=False), quantizer)  # torch 2.13 needs no guards
    prepared(*inputs)
    return torch.export.export(convert_pt2e(prepared), tuple(inputs))


def _program(exported: torch.export.ExportedProgram, inputs: list[torch.Tensor], xnnpack: Optional[str]) -> bytes:
    from executorch.exir import to_edge_transform_and_lower

    if xnnpack is None:
        return to_edge_transform_and_lower(exported).to_executorch().buffer
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    if xnnpack == "int8":
        exported = _quantized(exported, inputs)
    return to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch().buffer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pt2", type=Path)
    parser.add_argument("inputs", type=Path, nargs="+")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--xnnpack", choices=["fp32", "int8"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--save", type=Path)
    args = parser.parse_args()

    from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool
    from executorch.runtime import Runtime

    _unsafe_reset_threadpool(args.threads)
    inputs = [torch.from_numpy(np.load(p)) for p in args.inputs]
    buffer = _program(torch.export.load(str(args.pt2)), inputs, args.xnnpack)
    with tempfile.TemporaryDirectory() as tmp:
        pte = args.save or Path(tmp) / "model.pte"
        pte.write_bytes(buffer)
        start = time.perf_counter()
        method = Runtime.get().load_program(pte).load_method("forward")
        load_ms = (time.perf_counter() - start) * 1e3
        method.execute(inputs)  # warm-up
        times = []
        for _ in range(args.iterations):
            start = time.perf_counter()
            method.execute(inputs)
            times.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({"load_ms": load_ms, "execute_ms": times}))


if __name__ == "__main__":
    main()
