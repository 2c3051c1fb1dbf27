"""kiln-aot's flows, one object each: what a flow quantizes with, partitions with and lowers
the CPU part with, the file name it writes by default, and how ``--evaluate`` checks it.

* :class:`CpuFlow`: fp32, or int8 (``--quantize``) on the portable quantized kernels;
* :class:`CortexMFlow`: int8 for the ``cortex_m::`` kernels of a CPU without NPU;
* :class:`EthosUFlow`: int8 with Ethos-U delegates, the CPU part on ``cortex_m::`` kernels;
* :class:`XnnpackFlow`: fp32 or int8 with XNNPACK delegates.

:func:`choose_flow` checks the flag combination and picks the flow.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from kiln.targets import DEFAULT_TARGET, is_cortex_m_name
from kiln.tolerances import FLOAT_OUTPUT_LIMIT, INT8_OUTPUT_LIMIT

if TYPE_CHECKING:
    import torch


def outputs_as_list(value: Any) -> list[torch.Tensor]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def evaluate(program_bytes: bytes, inputs: Any, reference: list[torch.Tensor]) -> list[tuple[float, bool]]:
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


@dataclass
class RuntimeComparison:
    """The program on Kiln's runtime against (quantized) PyTorch, output by output."""

    results: list[tuple[float, bool]]
    limit: float
    before_per_layer = False

    def lines(self) -> list[str]:
        return [f"evaluate: output {i}: max abs error {err:.2e} of max |reference|, "
                f"top-1 {'agrees' if top1 else 'DIFFERS'}" for i, (err, top1) in enumerate(self.results)]

    def status(self) -> int:
        worst = max(err for err, _ in self.results)
        if worst > self.limit:
            print(f"error: Kiln's output differs from the reference by {worst:.2e} (limit {self.limit:g})",
                  file=sys.stderr)
            return 1
        return 0


@dataclass
class LinesOnly:
    """An evaluation that reports and never fails the command (delegates on the TOSA
    reference model, Cortex-M outputs in LSBs)."""

    text: list[str]
    before_per_layer: bool

    def lines(self) -> list[str]:
        return self.text

    def status(self) -> int:
        return 0


@dataclass
class CpuFlow:
    """fp32 (``spec`` None), or int8 quantized for the Ethos-U scheme, all on the CPU."""

    args: argparse.Namespace
    spec: Any = None  # the EthosUCompileSpec the quantizer is made for (int8)
    export_step = ""  # what the export step does besides exporting and lowering

    def default_name(self, stem: str) -> str:
        return f"{stem}_int8.pte" if self.args.quantize else f"{stem}.pte"

    def quantizer(self, model: Any = None) -> Any:
        """The Ethos-U scheme: int8, or 16-bit activations (``--a16w8``, or in the submodules
        ``--int16_layers`` names, each checked against ``model``)."""
        from kiln.backends.arm import EthosUQuantizer

        names = [name.strip() for name in (getattr(self.args, "int16_layers", None) or "").split(",") if name.strip()]
        if names and model is not None:
            _check_submodules(model, names)
        return EthosUQuantizer(self.spec, activations="int16" if getattr(self.args, "a16w8", False) else "int8",
                               int16_modules=names)

    def precision(self) -> str:
        """What ``--quantize`` quantizes to, for the progress line."""
        if getattr(self.args, "auto_precision", None) is not None:
            return "int8 and a16w8, chosen per layer"
        return "a16w8" if getattr(self.args, "a16w8", False) else \
            "int8 and a16w8" if getattr(self.args, "int16_layers", None) else "int8"

    def quantize(self, model: Any, inputs: Any, samples: list[Any]) -> Any:
        """The quantized program; operators a 16-bit request left int8 are printed with why."""
        import kiln

        if getattr(self.args, "auto_precision", None) is not None:
            from kiln.backends.arm.quantizer.choice import choose_precision

            choice = choose_precision(model, inputs, samples, self.spec, max_error=self.args.auto_precision,
                                      max_npu_cycles=self.args.max_npu_cycles,
                                      max_sram_bytes=self.args.max_sram_bytes)
            print(choice.table())
            return choice.program
        quantizer = self.quantizer(model)
        program = kiln.quantize(model, inputs, quantizer, samples, progress=False)
        for kept in getattr(quantizer, "kept_int8", []):
            print(f"kept int8: {kept.node} ({kept.operator}{', in ' + kept.module if kept.module else ''}): "
                  f"{kept.reason}")
        return program

    def partitioner(self) -> Any:
        return None

    def cpu_lowering(self) -> Any:
        return None

    def evaluate(self, progress: Any, output: Path, program: Any, quantized: Any, inputs: Any,
                 reference: list[torch.Tensor]) -> Any:
        import torch

        expected = reference
        if quantized is not None:
            with torch.no_grad():
                expected = outputs_as_list(quantized.module()(*inputs))
        with progress.step("evaluating on Kiln's runtime against "
                           + ("quantized PyTorch" if quantized is not None else "eager PyTorch")):
            results = evaluate(output.read_bytes(), inputs, expected)
        return RuntimeComparison(results, FLOAT_OUTPUT_LIMIT if quantized is None else INT8_OUTPUT_LIMIT)


@dataclass
class CortexMFlow(CpuFlow):
    """An int8 program for the cortex_m:: kernels of a CPU without NPU (``target``)."""

    target: str = ""
    export_step = "cortex_m:: "

    def default_name(self, stem: str) -> str:
        return f"{stem}_{self.target}.pte"

    def quantizer(self, model: Any = None) -> Any:
        from kiln.backends.cortex_m import CortexMQuantizer

        return CortexMQuantizer(self.target)

    def cpu_lowering(self) -> Any:
        from kiln.backends.cortex_m import CortexMLowering

        return CortexMLowering()

    def evaluate(self, progress: Any, output: Path, program: Any, quantized: Any, inputs: Any,
                 reference: list[torch.Tensor]) -> Any:
        from kiln.backends.cortex_m.evaluate import compare_outputs

        with progress.step("evaluating on Kiln's runtime against quantized PyTorch (in LSBs)"):
            comparisons = compare_outputs(output.read_bytes(), quantized, inputs, reference)
        return LinesOnly([comparison.line(i) for i, comparison in enumerate(comparisons)], before_per_layer=False)


@dataclass
class EthosUFlow(CpuFlow):
    """int8 with the NPU-supported parts as Ethos-U delegates; the CPU part on cortex_m:: kernels."""

    @property
    def export_step(self) -> str:  # type: ignore[override]
        return f"partitioning for {self.spec.target}, TOSA + Vela per subgraph, cortex_m:: "

    def default_name(self, stem: str) -> str:
        return f"{stem}_{self.spec.target}.pte"

    def partitioner(self) -> Any:
        from kiln.backends.arm.partitioner import EthosUPartitioner

        return EthosUPartitioner(self.spec, nhwc_io=self.args.nhwc_io)

    def cpu_lowering(self) -> Any:
        from kiln.backends.cortex_m import CortexMLowering

        return CortexMLowering()

    def evaluate(self, progress: Any, output: Path, program: Any, quantized: Any, inputs: Any,
                 reference: list[torch.Tensor]) -> Any:
        if program.compile_report is None:
            return super().evaluate(progress, output, program, quantized, inputs, reference)
        from kiln.export.evaluate import evaluate_delegated

        with progress.step("evaluating delegates on the TOSA reference model"):
            evaluation = evaluate_delegated(quantized, program.compile_report, inputs, reference)
        return LinesOnly(evaluation.lines(), before_per_layer=True)


@dataclass
class XnnpackFlow(CpuFlow):
    """fp32, or int8 with the XNNPACK quantizer, with XNNPACK delegates."""

    export_step = "partitioning for XNNPACK, "

    def default_name(self, stem: str) -> str:
        return f"{stem}_int8_xnnpack.pte" if self.args.quantize else f"{stem}_xnnpack.pte"

    def quantizer(self, model: Any = None) -> Any:
        from kiln.backends.xnnpack import XnnpackQuantizer

        return XnnpackQuantizer()

    def partitioner(self) -> Any:
        from kiln.backends.xnnpack import XnnpackPartitioner

        return XnnpackPartitioner()


def choose_flow(args: argparse.Namespace) -> CpuFlow:
    """The flow the flags ask for; a :class:`kiln.KilnError` for a combination that makes no sense.

    The NPU flags (--target, --system_config, --memory_mode) are checked whenever they are
    given, and refused without --delegate: nothing would run on the NPU they name.
    """
    import kiln.models
    from kiln import KilnError

    if not kiln.models.is_model_file(args.model_name):
        kiln.models.describe(args.model_name)  # an unknown name fails here, before torch is imported
    _check_precision_flags(args)
    if args.backend == "xnnpack":
        return _xnnpack_flow(args)
    if args.calibration_samples < 1:
        raise KilnError(f"--calibration_samples must be at least 1, got {args.calibration_samples}")
    if args.target is not None and is_cortex_m_name(args.target):
        return _cortex_m_flow(args)
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
        return CpuFlow(args)
    from kiln.backends.arm import EthosUCompileSpec

    spec = EthosUCompileSpec(args.target or DEFAULT_TARGET, system_config=args.system_config,
                             memory_mode=args.memory_mode)
    if npu_flags and not args.delegate:
        raise KilnError(f"{' '.join(npu_flags)} applies only with --delegate (add --quantize --delegate to run "
                        "on the NPU); without it the whole program runs on the CPU")
    return EthosUFlow(args, spec) if args.delegate else CpuFlow(args, spec)


def _check_precision_flags(args: argparse.Namespace) -> None:
    """--a16w8, --int16_layers, --auto_precision and its budgets: the Ethos-U's 16-bit
    activations, each flag only where it means something."""
    from kiln import KilnError

    a16w8, int16_layers = getattr(args, "a16w8", False), getattr(args, "int16_layers", None)
    auto, cycles, sram = (getattr(args, name, None) for name in ("auto_precision", "max_npu_cycles", "max_sram_bytes"))
    if not (a16w8 or int16_layers or auto is not None or cycles is not None or sram is not None):
        return
    if args.backend == "xnnpack" or (args.target is not None and is_cortex_m_name(args.target)):
        raise KilnError("--a16w8, --int16_layers and --auto_precision are for the Ethos-U quantizer (16-bit "
                        "activations on the NPU); the XNNPACK and cortex_m:: kernels are int8")
    if (a16w8 or int16_layers) and not args.quantize:
        raise KilnError("--a16w8 and --int16_layers choose the precision of --quantize: add --quantize")
    if auto is not None and not (args.quantize and args.delegate):
        raise KilnError("--auto_precision needs --quantize --delegate: it measures NPU cycles and SRAM of each choice")
    if auto is not None and (a16w8 or int16_layers):
        raise KilnError("--auto_precision chooses the 16-bit layers itself: leave out --a16w8 and --int16_layers")
    if (cycles is not None or sram is not None) and auto is None:
        raise KilnError("--max_npu_cycles and --max_sram_bytes are budgets of --auto_precision: add it")
    if a16w8 and int16_layers:
        raise KilnError("--a16w8 makes every layer 16-bit already: give it or --int16_layers, not both")


def _check_submodules(model: Any, names: list[str]) -> None:
    """Each of ``names`` is a submodule of ``model``, or a part of a GRU/LSTM submodule
    (``rnn.l0.input_projection``, ``rnn.l0.steps.T``: its steps are checked when the
    quantizer unrolls it). A typo is a named error with the nearest name."""
    import difflib

    import torch

    from kiln import KilnError
    from kiln.delegation.quantizer.scopes import RECURRENT_PART

    modules = dict(model.named_modules())
    known = [name for name in modules if name]
    for name in names:
        part = RECURRENT_PART.match(name)
        layer = modules.get(part.group("layer")) if part else None
        if isinstance(layer, torch.nn.RNNBase) and int(part.group("index")) < layer.num_layers:
            continue
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise KilnError(f"--int16_layers: the model has no submodule {name!r}{hint}")


def _cortex_m_flow(args: argparse.Namespace) -> CortexMFlow:
    from kiln import KilnError
    from kiln.targets import check_cortex_m_target

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
    return CortexMFlow(args, target=target)


def _xnnpack_flow(args: argparse.Namespace) -> XnnpackFlow:
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
    return XnnpackFlow(args)


def cpu_lowering_line(flow: CpuFlow, lowering: Optional[Any]) -> Optional[str]:
    """The closing line on the CPU part's cortex_m:: kernels, if the flow lowered it."""
    if lowering is None or lowering.report is None:
        return None
    where = "the CPU part: " if isinstance(flow, EthosUFlow) else ""
    return f"cortex_m: {where}{lowering.report.line()}"
