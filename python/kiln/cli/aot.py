"""``kiln-aot`` (also ``python -m kiln.aot_compiler``): compile a PyTorch model to a .pte.

Four flows:

* fp32 CPU (default): export -> core ATen -> out-variant calls -> memory planning -> .pte
  run by Kiln's portable kernels (``--evaluate`` runs it on Kiln's runtime).
* ``--quantize``: int8 (PT2E, Ethos-U quantizer) run by the portable quantized kernels;
  ``--a16w8`` / ``--int16_layers`` give all or named layers 16-bit activations (int8 weights),
  ``--auto_precision`` chooses the layers from measured error under NPU cycle/SRAM budgets.
* ``--quantize --target cortex-m55`` (or -m4, -m7, -m33, -m85): int8 for CMSIS-NN's
  arithmetic, lowered to the ``cortex_m::`` kernels (kiln.backends.cortex_m).
* ``--quantize --delegate``: the NPU-supported parts become Ethos-U delegates
  (TOSA -> Vela); ``--evaluate`` checks them with the TOSA reference model. What stays on
  the CPU runs on ``cortex_m::`` kernels where they have the operator.
* ``--delegate --backend xnnpack`` (fp32, or int8 with ``--quantize``): the parts XNNPACK
  runs become XNNPACK delegates, for host and Android CPUs.

Each flow is an object of :mod:`kiln.cli.aot_flows`; the compile flags kiln-deploy shares
are declared in :mod:`kiln.cli.compile_options`.

Every failure ends in one line on stderr (kiln.cli.errors): exit 2 for the user's errors
(flags, model, files), 1 for an evaluation over its limit or an internal error;
``--debug`` prints the traceback too.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from kiln.cli.aot_flows import choose_flow, cpu_lowering_line, outputs_as_list
from kiln.cli.compile_options import add_compile_options

if TYPE_CHECKING:
    import torch

# numpy and torch are imported where they are used: a mistyped flag fails at once, without
# the seconds torch takes to import.

EPILOG = """examples:
  kiln-aot --model_name mv2 --output mv2.pte --evaluate
  kiln-aot --model_name mv2 --quantize --delegate --target ethos-u55-128 --intermediates out/ --evaluate
  kiln-aot --model_name mv2 --quantize --target cortex-m55 --evaluate
  kiln-aot --model_name my_net.py:MyNet --output my_net.pte --intermediates out/my_net
  kiln-aot --model_name mv2 --delegate --backend xnnpack --quantize
  kiln-aot --model_name dscnn --quantize --delegate --a16w8 --evaluate
  kiln-aot --model_name transformer --quantize --delegate --auto_precision 0.01 --max_npu_cycles 200000
"""


def build_parser() -> argparse.ArgumentParser:
    from kiln.cli.errors import OneLineArgumentParser

    parser = OneLineArgumentParser(
        prog="kiln-aot", description="Compile a PyTorch model to a Kiln/ExecuTorch .pte program.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model_name", "-m", required=True,
                        help="a built-in model (kiln.models: %(choices_text)s) or path/to/file.py:ClassName "
                             "whose class has get_example_inputs()" % {"choices_text": _model_names()})
    parser.add_argument("--output", "-o",
                        help="where to write the program; a folder (existing, or ending in /) gets the "
                             "default name (in the current folder by default: <model>.pte; "
                             "<model>_int8.pte with --quantize; <model>_<target>.pte with --delegate)")
    parser.add_argument("--backend", choices=["ethos-u", "xnnpack"], default="ethos-u",
                        help="what --delegate delegates to: the Ethos-U NPU (int8, needs --quantize) or "
                             "XNNPACK on the CPU (fp32, or int8 with --quantize, which then uses the XNNPACK "
                             "quantizer) (default: %(default)s)")
    parser.add_argument("--nhwc_io", action="store_true",
                        help="delegates take/return channels-last (NHWC) tensors where they are the "
                             "program's inputs/outputs, so the CPU does not transpose them")
    parser.add_argument("--per-layer", "--per_layer", dest="per_layer", action="store_true",
                        help="with --evaluate and --quantize: compare every layer across fp32 PyTorch, the "
                             "quantized model, the TOSA reference model and the virtual NPU (SNR, max LSB), and "
                             "write per_layer.txt and PNGs (per-layer error, memory plan, NPU cycles) to "
                             "--intermediates (default: <output>_per_layer/)")
    parser.add_argument("--unplanned_io", action="store_true",
                        help="leave inputs and outputs out of the planned memory (the caller provides them)")
    add_compile_options(parser)
    parser.add_argument("--a16w8", action="store_true",
                        help="with --quantize for the Ethos-U: 16-bit activations and int8 weights everywhere the "
                             "NPU computes in 16 bits; the other operators keep int8, each named with its reason")
    parser.add_argument("--int16_layers", "--int16-layers", dest="int16_layers", metavar="NAME,...",
                        help="with --quantize for the Ethos-U: 16-bit activations in these submodules only "
                             "(names as in model.named_modules(); a GRU/LSTM's parts as rnn.l0.input_projection "
                             "and rnn.l0.steps.T), int8 elsewhere")
    parser.add_argument("--auto_precision", "--auto-precision", dest="auto_precision", type=float,
                        metavar="MAX_ERROR",
                        help="with --quantize --delegate: move the layers that matter most to 16-bit activations "
                             "until the output's relative RMS error vs fp32 on the calibration samples is at most "
                             "MAX_ERROR (e.g. 0.01), and print the per-layer choice")
    parser.add_argument("--max_npu_cycles", type=int, metavar="N",
                        help="with --auto_precision: a layer move that takes Vela's NPU cycle estimate over N is undone")
    parser.add_argument("--max_sram_bytes", type=int, metavar="N",
                        help="with --auto_precision: a layer move that takes the NPU's SRAM use over N bytes is undone")
    return parser


def _model_names() -> str:
    import kiln.models

    return ", ".join(kiln.models.names())


class _Progress:
    """Prints numbered steps with their duration: long work is never silent."""

    def __init__(self, total: int) -> None:
        self.total, self.index = total, 0

    def step(self, text: str):
        self.index += 1
        print(f"[{self.index}/{self.total}] {text} ...", end="", flush=True)
        return _Timer()


class _Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, exc_type, *_):
        if exc_type is None:
            print(f" {time.perf_counter() - self.start:.2f} s", flush=True)
        else:
            print(" failed", flush=True)


def _reference_outputs(model_name: str, model: torch.nn.Module, inputs) -> list[torch.Tensor]:
    """Eager PyTorch's outputs; a user's model that raises is reported as the user's error."""
    import torch

    import kiln.models
    from kiln.models.user_file import call_user_code

    def forward() -> list[torch.Tensor]:
        with torch.no_grad():
            return outputs_as_list(model(*inputs))

    return call_user_code(model_name, "forward()", forward) if kiln.models.is_model_file(model_name) else forward()


def calibration_samples(inputs: tuple[torch.Tensor, ...], count: int, seed: int = 0) -> list[tuple[torch.Tensor, ...]]:
    """The example inputs and ``count - 1`` random inputs with each float input's mean and std."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    samples = [tuple(inputs)]
    for _ in range(max(count, 1) - 1):
        sample = []
        for x in inputs:
            if x.is_floating_point():
                mean, std = float(x.mean()), float(x.std()) if x.numel() > 1 else 1.0
                sample.append(torch.randn(x.shape, generator=generator, dtype=x.dtype) * std + mean)
            else:
                sample.append(x)
        samples.append(tuple(sample))
    return samples


def resolve_output(requested: str | None, default: Path) -> Path:
    """Where the program goes: ``default`` in the current folder, the path given, or
    ``default``'s name inside the folder given (an existing folder, or a path ending in /)."""
    from kiln import KilnError

    if requested is None:
        return default
    path = Path(requested)
    if path.is_dir() or requested.endswith(("/", os.sep)):
        return path / default.name
    if path.exists() and not path.is_file():
        raise KilnError(f"--output {requested}: exists and is not a file")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise KilnError(f"--output {requested}: {parent} is a file, not a folder")
            break
    return path


def _write_intermediates(folder: Path, inputs, reference, program, quantized=None) -> None:
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    for i, x in enumerate(inputs):
        np.save(folder / f"input_{i}.npy", x.detach().numpy())
    for i, y in enumerate(reference):
        np.save(folder / f"reference_output_{i}.npy", y.detach().numpy())
    if quantized is not None:
        import torch

        # What the int8 program should reproduce (kiln-deploy --bundleio's expected outputs).
        with torch.no_grad():
            for i, y in enumerate(outputs_as_list(quantized.module()(*inputs))):
                np.save(folder / f"quantized_reference_output_{i}.npy", y.detach().numpy())
    (folder / "summary.txt").write_text(program.summary() + "\n")
    report = program.compile_report
    if report is None:
        return
    from kiln.backends.arm.vela import write_outputs

    report.partition_report.save(folder)
    if program.compile_report.delegates and program.compile_report.delegates[0].report.backend_id == "XnnpackBackend":
        for info in report.delegates:
            (folder / f"{info.name}_delegate.bin").write_bytes(info.preprocessed.blob)
        return
    for info in report.delegates:
        # <name>.tosa, <name>_vela.npz (Vela's raw output), <name>_per-layer.csv
        write_outputs(info.preprocessed.vela, info.preprocessed.tosa.flatbuffer, folder)
        (folder / f"{info.name}_delegate.bin").write_bytes(info.preprocessed.blob)


def _compile_summary(program, output: Path) -> list[str]:
    """The closing lines: nodes delegated / on CPU, NPU cycles, SRAM/flash, file size."""
    report = program.compile_report
    size = f"{output.stat().st_size:,} bytes"
    if report is None:
        return [f"result: all nodes on the CPU; program file {output} ({size})"]
    partition = report.partition_report
    delegates = [info.report for info in report.delegates]
    if delegates and delegates[0].backend_id == "XnnpackBackend":
        return [
            f"result: {partition.delegated_nodes} nodes delegated to XNNPACK in {len(delegates)} delegate(s), "
            f"{partition.cpu_nodes} on the CPU",
            f"        XNNPACK nodes {sum(sum(d.xnnpack_nodes.values()) for d in delegates):,}, "
            f"payload {sum(d.blob_bytes for d in delegates):,} B",
            f"        program file {output} ({size})",
        ]

    def total(field: str) -> str:
        values = [getattr(d, field) for d in delegates]
        return "?" if any(v is None for v in values) else f"{sum(values):,}"

    return [
        f"result: {partition.delegated_nodes} nodes delegated in {len(delegates)} delegate(s), "
        f"{partition.cpu_nodes} on the CPU",
        f"        NPU cycles (Vela estimate) {total('npu_cycles')}, SRAM {total('sram_bytes')} B, "
        f"flash {total('flash_bytes')} B, boundary transposes {total('transpose_bytes')} B",
        f"        program file {output} ({size})",
    ]


def run(args: argparse.Namespace) -> int:
    flow = choose_flow(args)
    output = resolve_output(args.output, Path(flow.default_name(Path(args.model_name.split(":")[-1]).stem)))
    import kiln
    import kiln.models

    progress = _Progress(3 + int(args.quantize) + int(args.evaluate) + int(args.per_layer))
    with progress.step(f"building model {args.model_name}"):
        model, inputs = kiln.models.load(args.model_name)
        reference = _reference_outputs(args.model_name, model, inputs)
    quantized = None
    if args.quantize:
        with progress.step(f"quantizing to {flow.precision()} ({args.calibration_samples} calibration samples)"):
            quantized = flow.quantize(model, inputs, calibration_samples(inputs, args.calibration_samples))
    partitioner, cpu_lowering = flow.partitioner(), flow.cpu_lowering()
    with progress.step(f"exporting, {flow.export_step}lowering, planning memory"):
        program = kiln.export(quantized if quantized is not None else model, inputs, partitioner=partitioner,
                              plan_inputs=not args.unplanned_io, plan_outputs=not args.unplanned_io,
                              cpu_lowering=cpu_lowering)
    with progress.step(f"writing {output}"):
        output.parent.mkdir(parents=True, exist_ok=True)
        program.save(output)
        if args.intermediates:
            _write_intermediates(args.intermediates, inputs, reference, program, quantized)
    evaluation = flow.evaluate(progress, output, program, quantized, inputs, reference) if args.evaluate else None
    per_layer = None
    if args.per_layer:
        from kiln.backends.arm.per_layer import write_per_layer_report

        folder = args.intermediates or output.with_name(f"{output.stem}_per_layer")
        with progress.step("comparing every layer: fp32, int8 PyTorch, TOSA reference, virtual NPU"):
            per_layer = write_per_layer_report(model, inputs, quantized, program, folder)
    return _print_results(args, program, output, evaluation, per_layer, cpu_lowering_line(flow, cpu_lowering))


def _print_results(args: argparse.Namespace, program: Any, output: Path, evaluation: Any,
                   per_layer: Optional[tuple[str, list[Path]]], cpu_lowering: Optional[str]) -> int:
    """Prints the summary, the report, the evaluation and the closing lines; the exit status."""
    print()
    print(program.summary())
    if program.compile_report is not None:
        print(program.compile_report.partition_report.table())
    if args.intermediates:
        print(f"intermediates: {args.intermediates}/")
    status = 0
    if evaluation is not None and evaluation.before_per_layer:
        print("\n".join(evaluation.lines()))
    if per_layer is not None:
        table, files = per_layer
        print(table)
        print("per-layer files: " + ", ".join(str(f) for f in files))
    if evaluation is not None and not evaluation.before_per_layer:
        for line in evaluation.lines():
            print(line)
        status = evaluation.status()
    if cpu_lowering is not None:
        print(cpu_lowering)
    print("\n".join(_compile_summary(program, output)))
    return status


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    from kiln.cli.errors import report_failure

    try:
        return run(args)
    except (Exception, KeyboardInterrupt) as error:  # noqa: BLE001 - every failure ends in one line
        return report_failure(error, args.debug)


if __name__ == "__main__":
    sys.exit(main())
