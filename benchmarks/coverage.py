"""NPU coverage of every zoo model: Kiln vs ExecuTorch's Arm flow, side by side.

    python benchmarks/coverage.py [--models dscnn,unet] [--targets ethos-u55-128,ethos-u85-256]
                                  [--calibration_samples 2] [--markdown FILE] [--json FILE]
                                  [--executorch-python PATH]
    python benchmarks/coverage.py --models public   # the public architectures below

``--models`` takes zoo names and the public architectures as public model code writes them
(:data:`PUBLIC_ARCHITECTURES`: DeiT-tiny, torchvision's MobileNetV3, and the Wav2Letter-,
DeepLabV3- and Conformer-style models of tests/python/arm/e2e, random seeded weights,
BatchNorm statistics settled); ``public`` stands for all of those.

For every model and target, each tool quantizes the same float model on the same
calibration samples with its own Ethos-U quantizer and partitions it with its own
partitioner: the table gives the operator nodes delegated to the NPU and left on the
CPU (in brackets: those other than quantize/dequantize), the number of delegates, and
whether the program runs on Kiln's runtime with its
delegates on the virtual NPU (ExecuTorch's host runtime cannot run Ethos-U programs;
Kiln's runs both tools' programs). ``runs`` is "yes", "no: <error>", or "-" when not
tried. For Kiln's programs also Vela's cycle estimate (all delegates) and how far the
program's outputs lie from the quantized PyTorch model on a calibration sample other than
the example input, in output steps (max/mean; ``-`` where a model has one sample).
Goal: Kiln delegates at least as much as ExecuTorch on every model.

ExecuTorch runs in its own venv (tools/setup_executorch.sh) as a subprocess
(executorch_arm_coverage.py); set --executorch-python or KILN_EXECUTORCH_PYTHON, else
only Kiln's columns are filled.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import torch

import kiln
import kiln.models

DEFAULT_TARGETS = ("ethos-u55-128", "ethos-u85-256")
WORKER = Path(__file__).with_name("executorch_arm_coverage.py")


@dataclass
class Coverage:
    """One tool's result for one model and target."""

    delegated: Optional[int] = None
    cpu: Optional[int] = None
    cpu_compute: Optional[int] = None  # CPU nodes other than quantize/dequantize
    delegates: Optional[int] = None
    runs: str = "-"
    error: str = ""
    cycles: Optional[int] = None  # Vela's estimate, all delegates together
    max_lsb: Optional[float] = None  # outputs vs the quantized PyTorch model, in output steps
    mean_lsb: Optional[float] = None

    def cells(self, numerics: bool = False) -> list[str]:
        if self.error:
            return ["error", "", "", "", self.error[:60], *(["", ""] if numerics else [])]
        show = lambda v: "-" if v is None else str(v)  # noqa: E731
        cells = [show(self.delegated), f"{show(self.cpu)} ({show(self.cpu_compute)})", show(self.delegates), self.runs]
        if numerics:
            lsb = "-" if self.max_lsb is None else f"{self.max_lsb:.0f}/{self.mean_lsb:.2f}"
            cells += [show(self.cycles), lsb]
        return cells


@dataclass
class Row:
    model: str
    target: str
    kiln: Coverage = field(default_factory=Coverage)
    executorch: Coverage = field(default_factory=Coverage)


def _runs(program_bytes: bytes, inputs: tuple[torch.Tensor, ...]) -> str:
    """Whether Kiln's runtime (virtual NPU for the delegates) runs the program."""
    from kiln.runtime import KilnRuntimeError, Runtime

    try:
        outputs = Runtime().load_program(program_bytes).load_method("forward").execute([x.numpy() for x in inputs])
    except KilnRuntimeError as error:
        return f"no: {error.error_name}"
    return "yes" if all(np.all(np.isfinite(np.asarray(o))) for o in outputs) else "no: non-finite output"


def _lsb_from_quantized_pytorch(quantized, program_bytes: bytes, sample: tuple[torch.Tensor, ...]
                                ) -> tuple[Optional[float], Optional[float]]:
    """(max, mean) distance of the program's dequantized outputs from the quantized PyTorch
    model's on ``sample``, in output steps; (None, None) if it does not run."""
    from kiln.export.evaluate import output_lsb
    from kiln.runtime import KilnRuntimeError, Runtime

    try:
        got = Runtime().load_program(program_bytes).load_method("forward").execute([x.numpy() for x in sample])
    except KilnRuntimeError:
        return None, None
    with torch.no_grad():
        expected = quantized.module()(*sample)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    steps = [np.abs(np.asarray(g, np.float64) - e.numpy().astype(np.float64)).reshape(-1) / lsb
             for g, e, lsb in zip(got, expected, output_lsb(quantized.graph)) if lsb is not None]
    if not steps:
        return None, None
    every = np.concatenate(steps)
    return float(every.max()), float(every.mean())


def kiln_coverage(quantized, inputs, target: str, check: Optional[tuple[torch.Tensor, ...]] = None) -> Coverage:
    from kiln.backends.arm import EthosUCompileSpec
    from kiln.backends.arm.partitioner import EthosUPartitioner

    try:
        program = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    except kiln.KilnError as error:
        return Coverage(error=f"{type(error).__name__}: {error}")
    report = program.compile_report
    partition = report.partition_report
    compute = sum(1 for d in partition.rejections() if "quantize_per_" not in d.operator)
    program_bytes = program.to_bytes()
    coverage = Coverage(partition.delegated_nodes, partition.cpu_nodes, compute, len(report.delegates),
                        _runs(program_bytes, inputs))
    coverage.cycles = sum(int(d.preprocessed.vela.total_cycles) for d in report.delegates)
    if check is not None:
        coverage.max_lsb, coverage.mean_lsb = _lsb_from_quantized_pytorch(quantized, program_bytes, check)
    return coverage


def executorch_coverage(python: str, model, samples, targets: list[str], workdir: Path) -> dict[str, Coverage]:
    """ExecuTorch's flow for every target in one worker process (its imports take ~10 s)."""
    inputs = samples[0]
    pt2 = workdir / "model.pt2"
    try:
        exported = torch.export.export(model, inputs, strict=False)
    except Exception:  # a mask from lengths.max() traces only strictly (as kiln.quantize falls back)
        try:
            exported = torch.export.export(model, inputs, strict=True)
        except Exception as error:
            return {target: Coverage(error=f"torch.export: {type(error).__name__}") for target in targets}
    torch.export.save(exported, str(pt2))
    paths = []
    for i, sample in enumerate(samples):
        path = workdir / f"sample_{i}.npz"
        np.savez(path, **{f"input_{k}": x.numpy() for k, x in enumerate(sample)})
        paths.append(str(path))
    command = [python, str(WORKER), str(pt2), str(workdir / "executorch"), *paths, "--targets", ",".join(targets)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    found: dict[str, Coverage] = {}
    for line in result.stdout.splitlines():
        if not line.startswith("{"):
            continue
        data = json.loads(line)
        if "error" in data:
            found[data["target"]] = Coverage(error=data["error"])
            continue
        pte = (workdir / "executorch" / f"{data['target']}.pte").read_bytes()
        found[data["target"]] = Coverage(data["delegated_nodes"], data["cpu_nodes"], data["cpu_compute_nodes"],
                                         data["delegates"], _runs(pte, inputs))
    for target in targets:
        if target not in found:
            tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
            found[target] = Coverage(error=f"worker exited {result.returncode}: {tail}")
    return found


def _user_written(module: str, builder: str):
    """A builder of tests/python/arm/e2e/<module>.py: (model, example inputs, samples)."""
    import importlib.util

    def build() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...], list[tuple[torch.Tensor, ...]]]:
        path = Path(__file__).parents[1] / "tests" / "python" / "arm" / "e2e" / f"{module}.py"
        spec = importlib.util.spec_from_file_location(f"kiln_benchmark_{module}", path)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = loaded  # torch.export's strict tracing imports it by name
        spec.loader.exec_module(loaded)  # type: ignore[union-attr]
        return getattr(loaded, builder)()

    return build


def _from_factory(factory: str):
    """A kiln.models factory ``module:function`` -> (model, example inputs, None: samples
    drawn like the zoo's)."""
    import importlib

    def build():
        module, function = factory.split(":")
        model, inputs = getattr(importlib.import_module(f"kiln.models.{module}"), function)()
        return model, inputs, None

    return build


# Architectures as public model code writes them (the ones ExecuTorch's Arm backend tests on
# the Ethos-U), in Kiln's own versions.
PUBLIC_ARCHITECTURES = {
    "deit_tiny": _from_factory("deit:make_deit_tiny"),
    "mobilenet_v3_torchvision": _from_factory("mobilenet_v3_torchvision:make_mobilenet_v3_torchvision"),
    "wav2letter": _user_written("speech_models", "wav2letter_head"),
    "deeplab_v3": _user_written("segmentation_models", "deeplab_v3"),
    "conformer": _user_written("speech_models", "conformer"),
}


def _model(name: str, samples_count: int):
    """(model, example inputs, calibration samples) of a zoo model or a public architecture."""
    from kiln.cli.aot import calibration_samples

    if name in PUBLIC_ARCHITECTURES:
        model, inputs, samples = PUBLIC_ARCHITECTURES[name]()
    else:
        (model, inputs), samples = kiln.models.get(name), None
    return model, inputs, samples or calibration_samples(inputs, samples_count)


def measure(names: list[str], targets: list[str], samples_count: int, executorch_python: str) -> list[Row]:
    from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer

    rows = []
    for name in names:
        model, inputs, samples = _model(name, samples_count)
        print(f"{name}: quantizing and compiling ...", file=sys.stderr, flush=True)
        quantized = kiln.quantize(model, inputs, EthosUQuantizer(EthosUCompileSpec(targets[0])), samples,
                                  progress=False)
        check = tuple(samples[1]) if len(samples) > 1 else None
        model_rows = [Row(name, target, kiln_coverage(quantized, inputs, target, check)) for target in targets]
        if executorch_python:
            with tempfile.TemporaryDirectory() as folder:
                theirs = executorch_coverage(executorch_python, model, samples, targets, Path(folder))
            for row in model_rows:
                row.executorch = theirs[row.target]
        for row in model_rows:  # as they come: a whole zoo takes long
            print("  " + " | ".join(_cells(row)), file=sys.stderr, flush=True)
        rows.extend(model_rows)
    return rows


_HEADER = ["model", "target", "Kiln NPU", "Kiln CPU (compute)", "Kiln deleg.", "Kiln runs", "Kiln cycles",
           "Kiln LSB max/mean", "ET NPU", "ET CPU (compute)", "ET deleg.", "ET runs"]


def _cells(row: Row) -> list[str]:
    return [row.model, row.target, *row.kiln.cells(numerics=True), *row.executorch.cells()]


def format_table(rows: list[Row]) -> str:
    table = [_HEADER, *(_cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(_HEADER))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table)


def format_markdown(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def summary(rows: list[Row]) -> str:
    """Compares the compute left on the CPU (nodes other than quantize/dequantize): the
    tools' graphs differ in node count for the same model (ExecuTorch's edge dialect
    keeps more view and copy nodes), so delegated node counts are not comparable."""
    compared = [r for r in rows if r.kiln.cpu_compute is not None and r.executorch.cpu_compute is not None]
    if not compared:
        return "ExecuTorch: not measured (set --executorch-python or KILN_EXECUTORCH_PYTHON)"
    behind = [f"{r.model}/{r.target}" for r in compared if r.kiln.cpu_compute > r.executorch.cpu_compute]
    ahead = sum(1 for r in compared if r.kiln.cpu_compute < r.executorch.cpu_compute)
    return (f"compute left on the CPU: Kiln less than ExecuTorch on {ahead} of {len(compared)} model/target "
            f"pairs, as little on {len(compared) - ahead - len(behind)}, more on {len(behind)}"
            + (f" ({', '.join(behind)})" if behind else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(kiln.models.names()),
                        help="comma-separated zoo models and public architectures ('public': all of those)")
    parser.add_argument("--targets", default=",".join(DEFAULT_TARGETS), help="comma-separated Ethos-U targets")
    parser.add_argument("--calibration_samples", type=int, default=2)
    parser.add_argument("--markdown", type=Path, help="also write the table as markdown")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--executorch-python", default=os.environ.get("KILN_EXECUTORCH_PYTHON", ""))
    args = parser.parse_args()
    logging.getLogger("torchao").setLevel(logging.ERROR)
    logging.getLogger("kiln").setLevel(logging.ERROR)
    python = args.executorch_python if args.executorch_python and Path(args.executorch_python).is_file() else ""
    names = [n for name in args.models.split(",") for n in (PUBLIC_ARCHITECTURES if name == "public" else [name])]
    rows = measure(names, args.targets.split(","), args.calibration_samples, python)
    print(format_table(rows))
    print(summary(rows))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(format_markdown(rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
