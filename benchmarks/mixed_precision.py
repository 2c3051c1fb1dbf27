"""fp32 vs int8 vs a16w8 vs the per-layer automatic choice, per zoo model and Ethos-U target.

    python benchmarks/mixed_precision.py [--models conv1d,dscnn,gru,lstm,transformer,digits | all]
                                         [--targets ethos-u55-128,ethos-u85-256]
                                         [--schemes int8,a16w8,auto] [--calibration_samples 4]
                                         [--gap 0.5] [--no_bit_exact] [--json FILE]

Each model is quantized three ways on the same calibration samples (kiln.cli.aot's: the
example input and random inputs of its mean and spread): all-int8, all-a16w8 (16-bit
activations, int8 weights; what the Ethos-U cannot run in 16 bits keeps int8) and the
automatic choice (kiln.backends.arm.quantizer.choice) with the error target
``a16w8 + gap x (int8 - a16w8)``: the share of the int8-to-a16w8 error gap it may keep.
Every program is compiled with Ethos-U delegates for the target and run on Kiln's runtime
(delegates on the virtual NPU) on the calibration samples, and every delegate is run on
the virtual NPU and on the TOSA reference model on random inputs over the whole range of
its dtypes (two seeds): the vNPU column says "yes" when they agree bit for bit.

``digits`` is a CNN trained on real data (scikit-learn's 8x8 handwritten digits: the digits
accuracy test's model), calibrated on 64 training images and evaluated on the 450 test images.

Columns: relative RMS error of the program's output vs eager fp32 (and, for a16w8, as a
share of int8's: the goal is at most 1/4), top-1 agreement with fp32 (argmax over the last
dim), accuracy on the digits test images, Vela's NPU cycles (sum over delegates) and, for the automatic choice, their share of
all-a16w8's, SRAM (largest delegate) and flash (sum), the nodes left on the CPU, the number
of layers in 16 bits, bit-exactness. The a16w8 row's note says what keeps its error above a
quarter of int8's (kiln.backends.arm.quantizer.limits): the error of the int8 weights alone
(fp32 activations) and the operators kept int8; the automatic choice's, how many recurrent
time steps it put in 16 bits when it took a GRU/LSTM in part. Exits 1 when a delegate differs
from the TOSA reference or a model fails.
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

DEFAULT_MODELS = ("conv1d", "dscnn", "gru", "lstm", "transformer", "digits")
DEFAULT_TARGETS = ("ethos-u55-128", "ethos-u85-256")
SCHEMES = {"int8": "int8", "int16": "a16w8"}  # EthosUQuantizer's activations -> the row's scheme


@dataclass
class Row:
    model: str
    target: str
    scheme: str  # fp32 / int8 / a16w8 / auto
    error: Optional[float] = None  # relative RMS vs fp32
    top1: Optional[float] = None  # share of samples whose argmax agrees with fp32
    accuracy: Optional[float] = None  # digits: share of the test images classified right
    npu_cycles: Optional[int] = None
    cycles_vs_a16w8: Optional[float] = None  # the automatic choice's NPU cycles / all-a16w8's
    sram_bytes: Optional[int] = None
    flash_bytes: Optional[int] = None
    cpu_nodes: Optional[int] = None
    int16_layers: str = ""
    vs_int8: Optional[float] = None  # a16w8: its error / int8's (the goal: at most 1/4, or the note says why not)
    bit_exact: str = ""  # every delegate on the virtual NPU == the TOSA reference model ("yes")
    seconds: float = 0.0
    note: str = ""


def _run(program: Any, samples: list[tuple[torch.Tensor, ...]]) -> list[list[np.ndarray]]:
    from kiln.runtime import Runtime

    method = Runtime().load_program(program.to_bytes()).load_method("forward")
    return [[np.asarray(v) for v in method.execute([x.numpy() for x in sample])] for sample in samples]


def _bit_exact(program: Any) -> str:
    """Every delegate on the virtual NPU against the TOSA reference model on random inputs
    over the whole range of their dtypes (two seeds): "yes", or which values differ."""
    from kiln.backends.arm.vnpu import reference_mismatches

    report = program.compile_report
    if report is None or not report.delegates:
        return "-"
    return "; ".join(reference_mismatches(report.delegates)) or "yes"


def _measure(row: Row, program: Any, data: "Quantized", check_bit_exact: bool) -> None:
    from kiln.backends.arm.quantizer.choice import relative_error

    outputs = _run(program, data.evaluation)
    row.error = relative_error(data.reference, outputs)
    agree = [int(np.argmax(r[0].reshape(-1, r[0].shape[-1]), -1).tolist() == np.argmax(
        o[0].reshape(-1, o[0].shape[-1]), -1).tolist()) for r, o in zip(data.reference, outputs)]
    row.top1 = float(np.mean(agree))
    if data.labels is not None:
        row.accuracy = float(np.mean([int(np.argmax(o[0])) == label for o, label in zip(outputs, data.labels)]))
    report = program.compile_report
    if report is not None:
        delegates = report.delegates
        row.npu_cycles = sum(int(d.report.npu_cycles or 0) for d in delegates)
        row.sram_bytes = max((int(d.report.sram_bytes or 0) for d in delegates), default=0)
        row.flash_bytes = sum(int(d.report.flash_bytes or 0) for d in delegates)
        row.cpu_nodes = sum(1 for d in report.partition_report.decisions
                            if not d.delegated and not d.reason.startswith("boundary"))
    if check_bit_exact:
        row.bit_exact = _bit_exact(program)


class Quantized:
    """A model with its calibration samples (for quantizing and for the automatic choice's
    measurements) and its evaluation samples (for the rows), quantized once per scheme (the
    Ethos-U quantizer's annotations do not depend on the target) for every target's rows.
    Zoo models are evaluated on their calibration samples; ``digits`` is the CNN of
    tests/python/arm/e2e/test_digits_accuracy.py trained on scikit-learn's 8x8 digits, its
    first 64 training images the calibration and the 450 test images, with their labels, the
    evaluation (real data: the accuracy column)."""

    def __init__(self, name: str, count: int) -> None:
        from kiln.backends.arm.quantizer.choice import outputs_of
        from kiln.cli.aot import calibration_samples

        self.labels: Optional[list[int]] = None
        if name == "digits":
            self.model, self.samples, self.evaluation, self.labels = _digits()
            self.inputs = self.samples[0]
        else:
            self.model, self.inputs = kiln.models.get(name)
            self.samples = calibration_samples(self.inputs, count)
            self.evaluation = self.samples
        self.model.eval()
        self.calibration_reference = outputs_of(self.model, self.samples)
        self.reference = outputs_of(self.model, self.evaluation)
        self.programs: dict[str, tuple[Any, Any, float]] = {}  # activations -> (program, quantizer, seconds)

    def get(self, activations: str) -> tuple[Any, Any, float]:
        from kiln.backends.arm import EthosUQuantizer

        if activations not in self.programs:
            started = time.perf_counter()
            quantizer = EthosUQuantizer(None, activations=activations)
            program = kiln.quantize(self.model, self.inputs, quantizer, self.samples, progress=False)
            self.programs[activations] = (program, quantizer, time.perf_counter() - started)
        return self.programs[activations]


def _digits() -> tuple[torch.nn.Module, list[tuple[torch.Tensor]], list[tuple[torch.Tensor]], list[int]]:
    """The digits test's CNN, trained as the test trains it (its recipe has one owner)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python" / "arm" / "e2e"))
    try:
        from test_digits_accuracy import CALIBRATION_SAMPLES, _digits as split, _train
    finally:
        sys.path.pop(0)
    x_train, x_test, y_train, y_test = split()
    model = _train(x_train, y_train)
    calibration = [(torch.from_numpy(x_train[i:i + 1]),) for i in range(CALIBRATION_SAMPLES)]
    evaluation = [(torch.from_numpy(x_test[i:i + 1]),) for i in range(len(x_test))]
    return model, calibration, evaluation, [int(label) for label in y_test]


def benchmark(name: str, target: str, quantized: Quantized, gap: float, schemes: tuple[str, ...],
              check_bit_exact: bool) -> list[Row]:
    from kiln.backends.arm import EthosUCompileSpec
    from kiln.backends.arm.partitioner import EthosUPartitioner
    from kiln.backends.arm.quantizer.choice import choose_precision, outputs_of, relative_error
    from kiln.backends.arm.quantizer.limits import int8_weights_error, what_limits_a16w8

    model, inputs, samples = quantized.model, quantized.inputs, quantized.samples
    reference = quantized.calibration_reference
    spec = EthosUCompileSpec(target)
    fp32_accuracy = None
    if quantized.labels is not None:
        fp32_accuracy = float(np.mean([int(np.argmax(r[0])) == label
                                       for r, label in zip(quantized.reference, quantized.labels)]))
    rows = [Row(name, target, "fp32", error=0.0, top1=1.0, accuracy=fp32_accuracy)]
    errors = {}
    kept: list[Any] = []
    for activations in ("int8", "int16"):
        if SCHEMES[activations] not in schemes and "auto" not in schemes:
            continue
        started = time.perf_counter()
        row = Row(name, target, SCHEMES[activations])
        quantized_program, quantizer, seconds = quantized.get(activations)
        program = kiln.export(quantized_program, partitioner=EthosUPartitioner(spec))
        _measure(row, program, quantized, check_bit_exact)
        errors[activations] = relative_error(reference, outputs_of(quantized_program.module(), samples))
        row.int16_layers = "all" if activations == "int16" else ""
        kept = quantizer.kept_int8 if activations == "int16" else kept
        row.seconds = seconds + time.perf_counter() - started
        rows.append(row)  # kept for the automatic choice's comparison; shown when asked for
    by_scheme = {row.scheme: row for row in rows}
    int8_row, a16w8_row = by_scheme.get("int8"), by_scheme.get("a16w8")
    if int8_row is not None and a16w8_row is not None and int8_row.error is not None and a16w8_row.error is not None:
        # on the calibration samples, where the weights' own error is measured too
        limits = what_limits_a16w8(errors["int8"], errors["int16"], int8_weights_error(model, samples, reference), kept)
        a16w8_row.note = "; ".join(limits[1:]) if limits else "at most 1/4 of int8's error"
        if int8_row.error:
            a16w8_row.vs_int8 = a16w8_row.error / int8_row.error
    if "auto" in schemes:
        started = time.perf_counter()
        target_error = errors["int16"] + gap * (errors["int8"] - errors["int16"])
        choice = choose_precision(model, inputs, samples, spec, max_error=target_error)
        logging.getLogger(__name__).info("%s", choice.table())
        row = Row(name, target, "auto")
        program = kiln.export(choice.program, partitioner=EthosUPartitioner(spec))
        _measure(row, program, quantized, check_bit_exact)
        row.int16_layers = f"{sum(r.precision == 'int16' for r in choice.layers)}/{len(choice.layers)}"
        parts = [name for name in choice.int16_modules if ".steps." in name]
        row.note = f"target {target_error:.2e} (calibration) {'met' if choice.target_met else 'NOT met'}" + \
            (f"; the last {len(parts)} recurrent step{'s' if len(parts) != 1 else ''} in 16 bits" if parts else "")
        if row.npu_cycles and a16w8_row is not None and a16w8_row.npu_cycles:
            row.cycles_vs_a16w8 = row.npu_cycles / a16w8_row.npu_cycles
        row.seconds = time.perf_counter() - started
        rows.append(row)
    return [row for row in rows if row.scheme in ("fp32", *schemes)]


def _cell(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def table(rows: list[Row]) -> str:
    lines = ["| model | target | scheme | error vs fp32 | vs int8 | top-1 vs fp32 | accuracy | NPU cycles "
             "| cycles vs a16w8 | SRAM | flash | CPU nodes | 16-bit layers | vNPU = TOSA ref | note |", "|" + "---|" * 15]
    for r in rows:
        lines.append(f"| {r.model} | {r.target} | {r.scheme} | {_cell(r.error, '.2e')} | {_cell(r.vs_int8, '.2f')} | "
                     f"{_cell(r.top1, '.0%')} | {_cell(r.accuracy, '.1%')} | {_cell(r.npu_cycles, 'd')} | {_cell(r.cycles_vs_a16w8, '.0%')} | "
                     f"{_cell(r.sram_bytes, 'd')} | {_cell(r.flash_bytes, 'd')} | {_cell(r.cpu_nodes, 'd')} | "
                     f"{r.int16_layers} | {r.bit_exact or '-'} | {r.note} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated zoo models and 'digits' (a CNN trained on real data), or "
                        "'all' (every zoo model and digits)")
    parser.add_argument("--targets", default=",".join(DEFAULT_TARGETS))
    parser.add_argument("--schemes", default="int8,a16w8,auto",
                        help="comma-separated: int8, a16w8, auto (the automatic choice is the slow one)")
    parser.add_argument("--calibration_samples", type=int, default=4)
    parser.add_argument("--gap", type=float, default=0.5,
                        help="error target of the automatic choice: a16w8 + GAP x (int8 - a16w8)")
    parser.add_argument("--no_bit_exact", action="store_true",
                        help="skip the check of every delegate on the virtual NPU against the TOSA reference model")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    schemes = tuple(s.strip() for s in args.schemes.split(",") if s.strip())
    unknown = [s for s in schemes if s not in ("int8", "a16w8", "auto")]
    if unknown:
        parser.error(f"unknown scheme {', '.join(unknown)} (int8, a16w8, auto)")
    models = [*kiln.models.names(), "digits"] if args.models == "all" else args.models.split(",")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for noisy in ("torchao", "kiln"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    rows: list[Row] = []
    for name in models:
        try:
            quantized = Quantized(name, args.calibration_samples)
        except Exception as error:
            rows.append(Row(name, "-", "error", note=f"{type(error).__name__}: {str(error)[:120]}"))
            continue
        for target in args.targets.split(","):
            try:
                rows.extend(benchmark(name, target, quantized, args.gap, schemes, not args.no_bit_exact))
            except Exception as error:  # one model's failure is a row, not the end of the table
                rows.append(Row(name, target, "error", note=f"{type(error).__name__}: {str(error)[:120]}"))
            print(table([r for r in rows if r.model == name and r.target == target]), flush=True)
            if args.json:
                args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    print(table(rows))
    exact = [r for r in rows if r.bit_exact not in ("", "-", "yes")]
    if exact:
        print("delegates that differ from the TOSA reference model:", *(f"{r.model} {r.target} {r.scheme}: "
                                                                        f"{r.bit_exact}" for r in exact), sep="\n  ")
    raise SystemExit(1 if exact or any(r.scheme == "error" for r in rows) else 0)


if __name__ == "__main__":
    main()
