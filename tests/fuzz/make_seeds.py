"""Seed corpora for the fuzz targets, made from real programs compiled by Kiln.

    python tests/fuzz/make_seeds.py OUTPUT_DIR

writes OUTPUT_DIR/program/*.pte (fuzz_program), OUTPUT_DIR/ethos_u_payload/*.bin
(fuzz_ethos_u_payload: a target byte, then a delegate payload) and
OUTPUT_DIR/vnpu_command_stream/*.bin (fuzz_vnpu_command_stream: its header, the command
stream, the weights) and OUTPUT_DIR/npu_device_registers/*.bin (fuzz_npu_device_registers:
its header, the memory, the register operations a driver makes). The input formats are the fuzz targets' (fuzz_inputs.h); the
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


def register_commands(payload: bytes) -> bytes:
    """The register commands inside a COP1 driver payload (its command stream action)."""
    words = struct.unpack(f"<{len(payload) // 4}I", payload[: len(payload) // 4 * 4])
    i = 1
    while i < len(words):
        action = words[i] & 0xFF
        if action == 1:
            i += 3
        elif action == 2:
            length = (((words[i] >> 8) & 0xFF) << 16) | (words[i] >> 16)
            return struct.pack(f"<{length}I", *words[i + 1 : i + 1 + length])
        else:
            i += 1
    raise ValueError("the payload has no command stream")


def device_seed(vela, target: str) -> bytes:
    """fuzz_npu_device_registers's input: what a driver does with one of Vela's streams —
    reset, memory configuration, base pointers, the PMU, QBASE/QSIZE, start, wait, read the
    results — then a second run after a reset. Memory A holds the register commands and the
    weights (16-byte aligned), memory B the scratch and the fast scratch."""
    commands = register_commands(vela.command_stream)
    weights_at = (len(commands) + 15) // 16 * 16
    memory_a = commands + bytes(weights_at - len(commands)) + vela.weights
    fast_at = (vela.scratch_size + 15) // 16 * 16
    pmcr = 0x1180 if target.startswith("ethos-u85") else 0x180
    pmevtyper0 = pmcr + 0x200

    def op(kind: int, selector: int, value: int = 0) -> bytes:
        return struct.pack("<BBHI", kind, 0, selector, value & 0xFFFFFFFF)

    run = [op(1, 0x020, len(commands)), op(3, 0 << 8, 0), op(6, 255), op(0, 0x004), op(0, 0x018),
           op(0, pmcr + 0x20), op(0, pmcr + 0x24), op(0, pmevtyper0 - 0x80), op(1, 0x008, 0xE)]
    ops = [op(4, 0, 1), op(6, 8), op(1, 0x03C, 0x2), op(1, 0x01C, 0),
           op(2, (0 << 8) | 0, weights_at), op(2, (1 << 8) | 1, 0), op(2, (1 << 8) | 2, fast_at),
           op(1, pmcr, 6), op(1, pmevtyper0, 35), op(1, pmcr + 0x04, 0x8000000F), op(1, pmcr, 1),
           *run, op(4, 0, 1), op(6, 8), op(2, (0 << 8) | 0, weights_at), op(2, (1 << 8) | 1, 0), *run]
    header = struct.pack("<BBII", TARGETS.index(target), 1, len(memory_a), fast_at + vela.fast_scratch_size)
    return header + memory_a + b"".join(ops)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    dirs = {name: args.output / name
            for name in ("program", "ethos_u_payload", "vnpu_command_stream", "npu_device_registers")}
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
            (dirs["npu_device_registers"] / f"{name}_{k}.bin").write_bytes(device_seed(pre.vela, target))
    for name, directory in dirs.items():
        print(f"{name}: {len(list(directory.iterdir()))} seed(s) in {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
