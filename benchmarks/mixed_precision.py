"""fp32 vs int8 vs a16w8 vs the per-layer automatic choice, per zoo model and Ethos-U target.

    python benchmarks/mixed_precision.py [--models conv1d,dscnn,gru,transformer]
                                         [--targets ethos-u55-128,ethos-u85-256]
                                         [--calibration_samples 4] [--gap 0.5] [--json FILE]

Each model is quantized three ways on the same calibration samples (kiln.cli.aot's: the
example input and random inputs of its mean and spread): all-int8, all-a16w8 (16-bit
activations, int8 weights; what the Ethos-U cannot run in 16 bits keeps int8) and the
automatic choice (kiln.backends.arm.quantizer.choice) with the error target
``a16w8 + gap x (int8 - a16w8)``: the share of the int8-to-a16w8 error gap it may keep.
Every program is compiled with Ethos-U delegates for the target and run on Kiln's runtime
(delegates on the virtual NPU, bit-exact with the TOSA reference) on the calibration samples.

Columns: relative RMS error of the program's output vs eager fp32, top-1 agreement with fp32
(argmax over the last dim), Vela's NPU cycles (sum over delegates) and, for the automatic
choice, their share of all-a16w8's, SRAM (largest delegate) and flash (sum), the nodes left
on the CPU, and the number of layers in 16 bits. The a16w8 row's note says what keeps its
error above a quarter of int8's (kiln.backends.arm.quantizer.limits): the error of the int8
weights alone (fp32 activations) and the operators kept int8.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch

import kiln
import kiln.models

DEFAULT_MODELS = ("conv1d", "dscnn", "gru", "transformer")
DEFAULT_TARGETS = ("ethos-u55-128", "ethos-u85-256")


@dataclass
class Row:
    model: str
    target: str
    scheme: str  # fp32 / int8 / a16w8 / auto
    error: Optional[float] = None  # relative RMS vs fp32
    top1: Optional[float] = None  # share of samples whose argmax agrees with fp32
    npu_cycles: Optional[int] = None
    cycles_vs_a16w8: Optional[float] = None  # the automatic choice's NPU cycles / all-a16w8's
    sram_bytes: Optional[int] = None
    flash_bytes: Optional[int] = None
    cpu_nodes: Optional[int] = None
    int16_layers: str = ""
    seconds: float = 0.0
    note: str = ""


def _run(program: Any, samples: list[tuple[torch.Tensor, ...]]) -> list[list[np.ndarray]]:
    from kiln.runtime import Runtime

    method = Runtime().load_program(program.to_bytes()).load_method("forward")
    return [[np.asarray(v) for v in method.execute([x.numpy() for x in sample])] for sample in samples]


def _measure(row: Row, program: Any, samples: list[tuple[torch.Tensor, ...]], reference: list[list[np.ndarray]]) -> None:
    from kiln.backends.arm.quantizer.choice import relative_error

    outputs = _run(program, samples)
    row.error = relative_error(reference, outputs)
    agree = [int(np.argmax(r[0].reshape(-1, r[0].shape[-1]), -1).tolist() == np.argmax(
        o[0].reshape(-1, o[0].shape[-1]), -1).tolist()) for r, o in zip(reference, outputs)]
    row.top1 = float(np.mean(agree))
    report = program.compile_report
    if report is not None:
        delegates = report.delegates
        row.npu_cycles = sum(int(d.report.npu_cycles or 0) for d in delegates)
        row.sram_bytes = max((int(d.report.sram_bytes or 0) for d in delegates), default=0)
        row.flash_bytes = sum(int(d.report.flash_bytes or 0) for d in delegates)
        row.cpu_nodes = sum(1 for d in report.partition_report.decisions
                            if not d.delegated and not d.reason.startswith("boundary"))


def benchmark(name: str, target: str, count: int, gap: float) -> list[Row]:
    from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
    from kiln.backends.arm.partitioner import EthosUPartitioner
    from kiln.backends.arm.quantizer.choice import choose_precision, outputs_of, relative_error
    from kiln.backends.arm.quantizer.limits import int8_weights_error, what_limits_a16w8
    from kiln.cli.aot import calibration_samples

    model, inputs = kiln.models.get(name)
    model.eval()
    spec = EthosUCompileSpec(target)
    samples = calibration_samples(inputs, count)
    reference = outputs_of(model, samples)
    rows = [Row(name, target, "fp32", error=0.0, top1=1.0)]
    errors = {}
    kept: list[Any] = []
    for activations in ("int8", "int16"):
        started = time.perf_counter()
        row = Row(name, target, "int8" if activations == "int8" else "a16w8")
        quantizer = EthosUQuantizer(spec, activations=activations)
        quantized = kiln.quantize(model, inputs, quantizer, samples, progress=False)
        program = kiln.export(quantized, partitioner=EthosUPartitioner(spec))
        _measure(row, program, samples, reference)
        errors[activations] = relative_error(reference, outputs_of(quantized.module(), samples))
        row.int16_layers = "all" if activations == "int16" else ""
        kept = quantizer.kept_int8 if activations == "int16" else kept
        row.seconds = time.perf_counter() - started
        rows.append(row)
    int8_row, a16w8_row = rows[1], rows[2]
    if int8_row.error is not None and a16w8_row.error is not None:
        limits = what_limits_a16w8(int8_row.error, a16w8_row.error, int8_weights_error(model, samples, reference), kept)
        a16w8_row.note = "; ".join(limits[1:]) if limits else "at most 1/4 of int8's error"
    started = time.perf_counter()
    target_error = errors["int16"] + gap * (errors["int8"] - errors["int16"])
    choice = choose_precision(model, inputs, samples, spec, max_error=target_error)
    logging.getLogger(__name__).info("%s", choice.table())
    row = Row(name, target, "auto")
    program = kiln.export(choice.program, partitioner=EthosUPartitioner(spec))
    _measure(row, program, samples, reference)
    row.int16_layers = f"{sum(r.precision == 'int16' for r in choice.layers)}/{len(choice.layers)}"
    row.note = f"target {target_error:.2e} {'met' if choice.target_met else 'NOT met'}"
    if row.npu_cycles and a16w8_row.npu_cycles:
        row.cycles_vs_a16w8 = row.npu_cycles / a16w8_row.npu_cycles
    row.seconds = time.perf_counter() - started
    rows.append(row)
    return rows


def _cell(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def table(rows: list[Row]) -> str:
    lines = ["| model | target | scheme | error vs fp32 | top-1 vs fp32 | NPU cycles | cycles vs a16w8 | SRAM | flash "
             "| CPU nodes | 16-bit layers | note |", "|" + "---|" * 12]
    for r in rows:
        lines.append(f"| {r.model} | {r.target} | {r.scheme} | {_cell(r.error, '.2e')} | {_cell(r.top1, '.0%')} | "
                     f"{_cell(r.npu_cycles, 'd')} | {_cell(r.cycles_vs_a16w8, '.0%')} | {_cell(r.sram_bytes, 'd')} | "
                     f"{_cell(r.flash_bytes, 'd')} | "
                     f"{_cell(r.cpu_nodes, 'd')} | {r.int16_layers} | {r.note} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--targets", default=",".join(DEFAULT_TARGETS))
    parser.add_argument("--calibration_samples", type=int, default=4)
    parser.add_argument("--gap", type=float, default=0.5,
                        help="error target of the automatic choice: a16w8 + GAP x (int8 - a16w8)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for noisy in ("torchao", "kiln"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    rows: list[Row] = []
    for name in args.models.split(","):
        for target in args.targets.split(","):
            try:
                rows.extend(benchmark(name, target, args.calibration_samples, args.gap))
            except Exception as error:  # one model's failure is a row, not the end of the table
                rows.append(Row(name, target, "error", note=f"{type(error).__name__}: {str(error)[:120]}"))
            print(table([r for r in rows if r.model == name and r.target == target]), flush=True)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")


if __name__ == "__main__":
    main()
