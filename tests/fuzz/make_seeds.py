"""Seed corpora for the fuzz targets, made from real programs compiled by Kiln.

    python tests/fuzz/make_seeds.py OUTPUT_DIR

writes OUTPUT_DIR/program/*.pte (fuzz_program), OUTPUT_DIR/ethos_u_payload/*.bin
(fuzz_ethos_u_payload: a target byte, then a delegate payload) and
OUTPUT_DIR/vnpu_command_stream/*.bin (fuzz_vnpu_command_stream: its header, the command
stream, the weights). The input formats are the fuzz targets' (fuzz_inputs.h); the
models are small so that each fuzz run stays fast. Nothing is checked in: the seeds
follow the compiler.
"""

from __future__ import annotations

import argparse
import logging
import struct
import sys
from pathlib import Path

import torch

import kiln
import kiln.models
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer

#: fuzz_inputs.h's table of targets (index = the first byte of a payload / stream input).
TARGETS = ["ethos-u55-128", "ethos-u55-64", "ethos-u55-256", "ethos-u55-32", "ethos-u65-256",
           "ethos-u65-512", "ethos-u85-128", "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024",
           "ethos-u85-2048"]
#: fuzz_ethos_u_payload: the first byte's flag for compile spec io_layout=nhwc (Kiln writes it).
PAYLOAD_NHWC = 0x10


class ConvPool(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.pool = torch.nn.AvgPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.relu(self.conv(x)))


class AddSigmoid(torch.nn.Module):
    """Elementwise operations and a lookup table (sigmoid) on the NPU."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x + y) * x


class AddSoftmax(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.softmax(torch.sigmoid(x + y) * x, dim=-1)


def _quantized(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], target: str,
               delegate: bool) -> kiln.Program:
    spec = EthosUCompileSpec(target)
    quantized = kiln.quantize(model.eval(), inputs, EthosUQuantizer(spec), [inputs], progress=False)
    partitioner = EthosUPartitioner(spec) if delegate else None
    return kiln.export(quantized, inputs, partitioner=partitioner)


def stream_seed(vela, target: str) -> bytes:
    """fuzz_vnpu_command_stream's input: target byte, stream length (words), scratch
    size, fast scratch size (little-endian u32s), the stream, then region 0."""
    header = struct.pack("<BIII", TARGETS.index(target), len(vela.command_stream) // 4,
                         vela.scratch_size, vela.fast_scratch_size)
    return header + vela.command_stream + vela.weights


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    dirs = {name: args.output / name for name in ("program", "ethos_u_payload", "vnpu_command_stream")}
    for directory in dirs.values():
        directory.mkdir(parents=True, exist_ok=True)

    add_softmax = (AddSoftmax(), (torch.randn(2, 8), torch.randn(1, 8)))
    conv_pool = (ConvPool(), (torch.randn(1, 3, 8, 8),))
    programs = {
        "add": kiln.export(*kiln.models.get("add")),
        "add_softmax": kiln.export(*add_softmax),
        "conv_pool_fp32": kiln.export(*conv_pool),
        "conv_pool_int8": _quantized(*conv_pool, "ethos-u55-128", delegate=False),
    }
    for target in ("ethos-u55-128", "ethos-u65-256", "ethos-u85-256", "ethos-u85-1024"):
        programs[f"conv_pool_{target}"] = _quantized(*conv_pool, target, delegate=True)
    add_sigmoid = (AddSigmoid(), (torch.randn(1, 4, 8, 8), torch.randn(1, 4, 8, 8)))
    for target in ("ethos-u55-64", "ethos-u85-512"):
        programs[f"add_sigmoid_{target}"] = _quantized(*add_sigmoid, target, delegate=True)
    for name, program in programs.items():
        program.save(dirs["program"] / f"{name}.pte")
        report = program.compile_report
        for k, delegate in enumerate(report.delegates if report is not None else []):
            pre = delegate.preprocessed
            target = pre.vela.target
            (dirs["ethos_u_payload"] / f"{name}_{k}.bin").write_bytes(bytes([TARGETS.index(target) | PAYLOAD_NHWC]) + pre.blob)
            (dirs["vnpu_command_stream"] / f"{name}_{k}.bin").write_bytes(stream_seed(pre.vela, target))
    for name, directory in dirs.items():
        print(f"{name}: {len(list(directory.iterdir()))} seed(s) in {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
