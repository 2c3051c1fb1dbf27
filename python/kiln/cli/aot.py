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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kiln.backends.arm.compile_spec import CORTEX_M_TARGETS, DEFAULT_TARGET, is_cortex_m_name

if TYPE_CHECKING:
    import torch

# numpy and torch are imported where they are used: a mistyped flag fails at once, without
# the seconds torch takes to import.

DEFAULT_CALIBRATION_SAMPLES = 8

EPILOG = """examples:
  kiln-aot --model_name mv2 --output mv2.pte --evaluate
  kiln-aot --model_name mv2 --quantize --delegate --target ethos-u55-128 --intermediates out/ --evaluate
  kiln-aot --model_name mv2 --quantize --target cortex-m55 --evaluate
  kiln-aot --model_name my_net.py:MyNet --output my_net.pte --intermediates out/my_net
  kiln-aot --model_name mv2 --delegate --backend xnnpack --quantize
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
    parser.add_argument("--quantize", "-q", action="store_true",
                        help="quantize to int8 (PT2E, Ethos-U quantizer) before compiling; without "
                             "--delegate the int8 program runs on the CPU's portable quantized kernels")
    parser.add_argument("--a16w8", action="store_true",
                        help="with --quantize for the Ethos-U: 16-bit activations and int8 weights everywhere the "
                             "NPU computes in 16 bits; the other operators keep int8, each named with its reason")
    parser.add_argument("--int16_layers", "--int16-layers", dest="int16_layers", metavar="NAME,...",
                        help="with --quantize for the Ethos-U: 16-bit activations in these submodules only "
                             "(names as in model.named_modules()), int8 elsewhere")
    parser.add_argument("--auto_precision", "--auto-precision", dest="auto_precision", type=float,
                        metavar="MAX_ERROR",
                        help="with --quantize --delegate: move the layers that matter most to 16-bit activations "
                             "until the output's relative RMS error vs fp32 on the calibration samples is at most "
                             "MAX_ERROR (e.g. 0.01), and print the per-layer choice")
    parser.add_argument("--max_npu_cycles", type=int, metavar="N",
                        help="with --auto_precision: a layer move that takes Vela's NPU cycle estimate over N is undone")
    parser.add_argument("--max_sram_bytes", type=int, metavar="N",
                        help="with --auto_precision: a layer move that takes the NPU's SRAM use over N bytes is undone")
    parser.add_argument("--delegate", "-d", action="store_true",
                        help="run the parts the Ethos-U NPU supports as delegates (needs --quantize); "
                             "the rest stays on the CPU, each node with its reason in the report")
    parser.add_argument("--backend", choices=["ethos-u", "xnnpack"], default="ethos-u",
                        help="what --delegate delegates to: the Ethos-U NPU (int8, needs --quantize) or "
                             "XNNPACK on the CPU (fp32, or int8 with --quantize, which then uses the XNNPACK "
                             "quantizer) (default: %(default)s)")
    parser.add_argument("--target", "-t",
                        help="Ethos-U target for --delegate: ethos-u55-32/64/128/256, ethos-u65-256/512, "
                             f"ethos-u85-128/256/512/1024/2048 (default: {DEFAULT_TARGET}); or a CPU without NPU "
                             f"for --quantize: {', '.join(CORTEX_M_TARGETS)} (int8 on the cortex_m:: kernels)")
    parser.add_argument("--system_config",
                        help="Vela system configuration for --delegate (default: derived from the target)")
    parser.add_argument("--memory_mode",
                        help="Vela memory mode for --delegate, e.g. Shared_Sram, Dedicated_Sram (default: derived "
                             "from the target)")
    parser.add_argument("--calibration_samples", type=int, default=DEFAULT_CALIBRATION_SAMPLES, metavar="N",
                        help="calibrate on N inputs: the example input and N-1 random inputs of the same "
                             "mean and spread (default: %(default)s)")
    parser.add_argument("--nhwc_io", action="store_true",
                        help="delegates take/return channels-last (NHWC) tensors where they are the "
                             "program's inputs/outputs, so the CPU does not transpose them")
    parser.add_argument("--intermediates", type=Path, metavar="DIR",
                        help="write the example inputs (input_<i>.npy), eager PyTorch's outputs "
                             "(reference_output_<i>.npy; with --quantize also the quantized model's, "
                             "quantized_reference_output_<i>.npy), the summary (summary.txt) and with --delegate the "
                             "partition report, each subgraph's TOSA flatbuffer and Vela output here")
    parser.add_argument("--evaluate", action="store_true",
                        help="fp32: run the program on Kiln's runtime vs eager PyTorch; --quantize: vs the "
                             "quantized PyTorch model; --delegate: each delegate on the TOSA reference "
                             "model vs quantized PyTorch (LSBs), and top-1 agreement with fp32")
    parser.add_argument("--per-layer", "--per_layer", dest="per_layer", action="store_true",
                        help="with --evaluate and --quantize: compare every layer across fp32 PyTorch, the "
                             "quantized model, the TOSA reference model and the virtual NPU (SNR, max LSB), and "
                             "write per_layer.txt and PNGs (per-layer error, memory plan, NPU cycles) to "
                             "--intermediates (default: <output>_per_layer/)")
    parser.add_argument("--unplanned_io", action="store_true",
                        help="leave inputs and outputs out of the planned memory (the caller provides them)")
    parser.add_argument("--debug", action="store_true", help="verbose logging and full tracebacks")
    return parser


def _model_names() -> str:
    import kiln.models

    return ", ".join(kiln.models.names())


@dataclass(frozen=True)
class CortexMTarget:
    """An int8 program for the cortex_m:: kernels of a CPU without NPU."""

    target: str


def _check_cortex_m(args: argparse.Namespace) -> CortexMTarget:
    from kiln import KilnError
    from kiln.backends.cortex_m import check_cortex_m_target

    target = check_cortex_m_target(args.target.strip().lower())
    if args.delegate:
        raise KilnError(f"--delegate needs an Ethos-U target: {target} has no NPU (leave out --delegate to run the "
                        "int8 program on its cortex_m:: kernels)")
    if not args.quantize:
        raise KilnError(f"--target {target} compiles int8 programs for the cortex_m:: kernels: add --quantize")
    for name in ("system_config", "memory_mode"):
        if getattr(args, name) is not None:
            raise KilnError(f"--{name} applies to Ethos-U targets, not to {target}")
    if args.nhwc_io or args.per_layer:
        raise KilnError(f"--{'nhwc_io' if args.nhwc_io else 'per-layer'} applies to Ethos-U delegates, not to {target}")
    return CortexMTarget(target)


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


def _outputs_as_list(value) -> list[torch.Tensor]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _reference_outputs(model_name: str, model: torch.nn.Module, inputs) -> list[torch.Tensor]:
    """Eager PyTorch's outputs; a user's model that raises is reported as the user's error."""
    import torch

    import kiln.models
    from kiln.models.user_file import call_user_code

    def forward() -> list[torch.Tensor]:
        with torch.no_grad():
            return _outputs_as_list(model(*inputs))

    return call_user_code(model_name, "forward()", forward) if kiln.models.is_model_file(model_name) else forward()


def evaluate(program_bytes: bytes, inputs, reference: list[torch.Tensor]) -> list[tuple[float, bool]]:
    """Runs the program on Kiln's runtime: (max abs error / max |reference|, top-1 agrees) per output."""
    import numpy as np

    from kiln.runtime import Runtime

    outputs = Runtime().load_program(program_bytes).load_method("forward").execute(list(inputs))
    results = []
    for got, ref in zip(outputs, reference):
        got_np, ref_np = np.asarray(got), ref.detach().numpy()
        scale = max(float(np.abs(ref_np).max()), 1e-12)
        top1 = bool(got_np.reshape(-1).argmax() == ref_np.reshape(-1).argmax())
        results.append((float(np.abs(got_np - ref_np).max()) / scale, top1))
    return results


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


def _check_arguments(args: argparse.Namespace) -> Any:
    """Validates flag combinations; returns the compile spec (or None for the fp32 flow).

    The NPU flags (--target, --system_config, --memory_mode) are checked whenever they are
    given, and refused without --delegate: nothing would run on the NPU they name.
    """
    import kiln.models
    from kiln import KilnError

    if not kiln.models.is_model_file(args.model_name):
        kiln.models.describe(args.model_name)  # an unknown name fails here, before torch is imported
    if (args.a16w8 or args.int16_layers or args.auto_precision is not None) and (args.backend == "xnnpack" or
                                              (args.target is not None and is_cortex_m_name(args.target))):
        raise KilnError("--a16w8, --int16_layers and --auto_precision are for the Ethos-U quantizer (16-bit "
                        "activations on the NPU); "
                        "the XNNPACK and cortex_m:: kernels are int8")
    if args.backend == "xnnpack":
        return _check_xnnpack_arguments(args)
    if args.calibration_samples < 1:
        raise KilnError(f"--calibration_samples must be at least 1, got {args.calibration_samples}")
    if args.target is not None and is_cortex_m_name(args.target):
        return _check_cortex_m(args)
    if (args.a16w8 or args.int16_layers) and not args.quantize:
        raise KilnError("--a16w8 and --int16_layers choose the precision of --quantize: add --quantize")
    if args.auto_precision is not None and not (args.quantize and args.delegate):
        raise KilnError("--auto_precision needs --quantize --delegate: it measures NPU cycles and SRAM of each choice")
    if args.auto_precision is not None and (args.a16w8 or args.int16_layers):
        raise KilnError("--auto_precision chooses the 16-bit layers itself: leave out --a16w8 and --int16_layers")
    if (args.max_npu_cycles is not None or args.max_sram_bytes is not None) and args.auto_precision is None:
        raise KilnError("--max_npu_cycles and --max_sram_bytes are budgets of --auto_precision: add it")
    if args.a16w8 and args.int16_layers:
        raise KilnError("--a16w8 makes every layer 16-bit already: give it or --int16_layers, not both")
    if args.delegate and not args.quantize:
        raise KilnError("--delegate needs --quantize: the Ethos-U NPU runs int8 programs")
    if args.nhwc_io and not args.delegate:
        raise KilnError("--nhwc_io only applies with --delegate")
    if args.per_layer and not (args.evaluate and args.quantize):
        raise KilnError("--per-layer needs --evaluate and --quantize: it compares the int8 program's layers "
                        "with the fp32 model")
    npu_flags = [f"--{name} {getattr(args, name)}" for name in ("target", "system_config", "memory_mode")
                 if getattr(args, name) is not None]
    if not (args.quantize or args.delegate or npu_flags):
        return None
    from kiln.backends.arm import EthosUCompileSpec

    spec = EthosUCompileSpec(args.target or DEFAULT_TARGET, system_config=args.system_config,
                             memory_mode=args.memory_mode)
    if npu_flags and not args.delegate:
        raise KilnError(f"{' '.join(npu_flags)} applies only with --delegate (add --quantize --delegate to run "
                        "on the NPU); without it the whole program runs on the CPU")
    return spec


def _check_xnnpack_arguments(args: argparse.Namespace) -> None:
    """--backend xnnpack: no NPU flags, and something to delegate."""
    from kiln import KilnError

    if not args.delegate:
        raise KilnError("--backend xnnpack applies only with --delegate")
    npu_flags = [f"--{name}" for name in ("target", "system_config", "memory_mode", "nhwc_io", "per_layer")
                 if getattr(args, name) not in (None, False)]
    if npu_flags:
        raise KilnError(f"{', '.join(npu_flags)}: Ethos-U options, not for --backend xnnpack")
    if args.calibration_samples < 1:
        raise KilnError(f"--calibration_samples must be at least 1, got {args.calibration_samples}")
    return None


def _default_output(args: argparse.Namespace, spec: Any) -> Path:
    stem = Path(args.model_name.split(":")[-1]).stem
    if args.backend == "xnnpack":
        return Path(f"{stem}_int8_xnnpack.pte" if args.quantize else f"{stem}_xnnpack.pte")
    if isinstance(spec, CortexMTarget) or args.delegate:
        return Path(f"{stem}_{spec.target}.pte")
    return Path(f"{stem}_int8.pte" if args.quantize else f"{stem}.pte")


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
            for i, y in enumerate(_outputs_as_list(quantized.module()(*inputs))):
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


def _quantize(model, inputs, spec, count: int, backend: str = "ethos-u", *, a16w8: bool = False,
              int16_layers: str | None = None, auto_precision: tuple[float, int | None, int | None] | None = None):
    import kiln

    if auto_precision is not None:
        from kiln.backends.arm.quantizer.choice import choose_precision

        max_error, max_cycles, max_sram = auto_precision
        choice = choose_precision(model, inputs, calibration_samples(inputs, count), spec, max_error=max_error,
                                  max_npu_cycles=max_cycles, max_sram_bytes=max_sram)
        print(choice.table())
        return choice.program

    if backend == "xnnpack":
        from kiln.backends.xnnpack import XnnpackQuantizer

        quantizer = XnnpackQuantizer()
    elif isinstance(spec, CortexMTarget):
        from kiln.backends.cortex_m import CortexMQuantizer

        quantizer = CortexMQuantizer(spec.target)
    else:
        from kiln.backends.arm import EthosUQuantizer

        names = [name.strip() for name in (int16_layers or "").split(",") if name.strip()]
        quantizer = EthosUQuantizer(spec, activations="int16" if a16w8 else "int8",
                                    int16_modules=_existing_modules(model, names))
    program = kiln.quantize(model, inputs, quantizer, calibration_samples(inputs, count), progress=False)
    for kept in getattr(quantizer, "kept_int8", []):
        print(f"kept int8: {kept.node} ({kept.operator}{', in ' + kept.module if kept.module else ''}): {kept.reason}")
    return program


def _existing_modules(model, names: list[str]) -> list[str]:
    """``names``, each checked against the model's submodules (a typo is a named error)."""
    import difflib

    known = [name for name, _ in model.named_modules() if name]
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            from kiln import KilnError

            raise KilnError(f"--int16_layers: the model has no submodule {name!r}{hint}")
    return names


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


def run(args: argparse.Namespace) -> int:  # noqa: C901 - one step after the other
    spec = _check_arguments(args)
    output = resolve_output(args.output, _default_output(args, spec))
    import torch

    import kiln
    import kiln.models

    steps = 3 + int(args.quantize) + int(args.evaluate) + int(args.per_layer)
    progress = _Progress(steps)
    with progress.step(f"building model {args.model_name}"):
        model, inputs = kiln.models.load(args.model_name)
        reference = _reference_outputs(args.model_name, model, inputs)
    quantized = None
    if args.quantize:
        precision = ("int8 and a16w8, chosen per layer" if args.auto_precision is not None else
                     "a16w8" if args.a16w8 else "int8 and a16w8" if args.int16_layers else "int8")
        with progress.step(f"quantizing to {precision} ({args.calibration_samples} calibration samples)"):
            quantized = _quantize(model, inputs, spec, args.calibration_samples, args.backend,
                                  a16w8=args.a16w8, int16_layers=args.int16_layers,
                                  auto_precision=None if args.auto_precision is None else
                                  (args.auto_precision, args.max_npu_cycles, args.max_sram_bytes))
    partitioner = None
    if args.backend == "xnnpack":
        from kiln.backends.xnnpack import XnnpackPartitioner

        partitioner = XnnpackPartitioner()
    elif args.delegate:
        from kiln.backends.arm.partitioner import EthosUPartitioner

        partitioner = EthosUPartitioner(spec, nhwc_io=args.nhwc_io)
    cortex_m = None
    if isinstance(spec, CortexMTarget) or (args.delegate and args.backend != "xnnpack"):
        from kiln.backends.cortex_m import CortexMLowering

        cortex_m = CortexMLowering()
    what = f"partitioning for {spec.target}, TOSA + Vela per subgraph, " if spec is not None and args.delegate else ""
    what += "cortex_m:: " if cortex_m is not None else ""
    if args.backend == "xnnpack":
        what = "partitioning for XNNPACK, "
    with progress.step(f"exporting, {what}lowering, planning memory"):
        program = kiln.export(quantized if quantized is not None else model, inputs, partitioner=partitioner,
                              plan_inputs=not args.unplanned_io, plan_outputs=not args.unplanned_io,
                              cpu_lowering=cortex_m)
    with progress.step(f"writing {output}"):
        output.parent.mkdir(parents=True, exist_ok=True)
        program.save(output)
        if args.intermediates:
            _write_intermediates(args.intermediates, inputs, reference, program, quantized)
    results, evaluation, cortex_m_results = None, None, None
    if args.evaluate:
        if program.compile_report is not None and args.backend != "xnnpack":
            from kiln.export.evaluate import evaluate_delegated

            with progress.step("evaluating delegates on the TOSA reference model"):
                evaluation = evaluate_delegated(quantized, program.compile_report, inputs, reference)
        elif isinstance(spec, CortexMTarget):
            from kiln.backends.cortex_m.evaluate import compare_outputs

            with progress.step("evaluating on Kiln's runtime against quantized PyTorch (in LSBs)"):
                cortex_m_results = compare_outputs(output.read_bytes(), quantized, inputs, reference)
        else:
            expected = reference
            if quantized is not None:
                with torch.no_grad():
                    expected = _outputs_as_list(quantized.module()(*inputs))
            with progress.step("evaluating on Kiln's runtime against "
                               + ("quantized PyTorch" if quantized is not None else "eager PyTorch")):
                results = evaluate(output.read_bytes(), inputs, expected)

    per_layer = None
    if args.per_layer:
        from kiln.devtools.per_layer import write_per_layer_report

        folder = args.intermediates or output.with_name(f"{output.stem}_per_layer")
        with progress.step("comparing every layer: fp32, int8 PyTorch, TOSA reference, virtual NPU"):
            per_layer = write_per_layer_report(model, inputs, quantized, program, folder)

    print()
    print(program.summary())
    if program.compile_report is not None:
        print(program.compile_report.partition_report.table())
    if args.intermediates:
        print(f"intermediates: {args.intermediates}/")
    status = 0
    if evaluation is not None:
        print("\n".join(evaluation.lines()))
    if per_layer is not None:
        table, files = per_layer
        print(table)
        print("per-layer files: " + ", ".join(str(f) for f in files))
    for i, comparison in enumerate(cortex_m_results or []):
        print(comparison.line(i))
    if results is not None:
        worst = max(err for err, _ in results)
        for i, (err, top1) in enumerate(results):
            print(f"evaluate: output {i}: max abs error {err:.2e} of max |reference|, "
                  f"top-1 {'agrees' if top1 else 'DIFFERS'}")
        limit = 1e-4 if quantized is None else 1e-2
        if worst > limit:
            print(f"error: Kiln's output differs from the reference by {worst:.2e} (limit {limit:g})", file=sys.stderr)
            status = 1
    if cortex_m is not None and cortex_m.report is not None:
        where = "the CPU part: " if args.delegate else ""
        print(f"cortex_m: {where}{cortex_m.report.line()}")
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
