"""Per-layer precision chosen from measurement: which layers get 16-bit activations.

    choice = choose_precision(model, inputs, calibration, EthosUCompileSpec("ethos-u55-128"),
                              max_error=0.01, max_npu_cycles=200_000)
    print(choice.table())
    program = kiln.export(choice.program, partitioner=EthosUPartitioner(spec))

1. **Measure.** The model is quantized all-int8, all-a16w8, and once per candidate layer with
   every layer 16-bit but that one (a convolution, linear or recurrent layer with the batch
   norm, activation and pooling modules after it: :class:`Layer`). Each quantized model runs
   on the calibration samples; its error is the relative RMS distance of its outputs to eager
   fp32 (``||q - f|| / ||f||`` over all samples and outputs). A layer's *gain* is how much
   the error rises when it alone stays int8: 16 bits pay where a tensor is 16-bit at both its
   producer and its consumer, so a layer alone in 16 bits among int8 ones shows little, while
   one left out among 16-bit ones shows what it costs. The quantized PyTorch
   model is what the NPU computes (the delegates are bit-exact to the TOSA lowering of it), so
   no compile is needed to measure.
2. **Move.** Layers go to 16 bits in order of gain (largest first), each move measured again
   (the gains do not add up exactly) and compiled with Vela for its cost (NPU cycles, SRAM).
   A move that breaks a budget is undone and the next layer tried; the walk stops as soon as
   the error target is met. The shortest run of last layers that meets the target is the
   other candidate (a run up to the output adds no requantization pass, where a mix pays one
   after each 16-bit layer followed by an int8 one); the cheaper of the two is the mix.
   If every layer in 16 bits meets the target at no more cost than the mix (each boundary
   between int8 and 16-bit layers is a requantization pass), or the mix misses the target
   and all-a16w8 does better, the choice is all-a16w8. A GRU or LSTM in the choice is then
   tried in part: its input projection and its last 0, 1, 2, 4 ... time steps in 16 bits
   (recurrent.py names the parts), the rest int8, kept when that meets the target for fewer
   cycles (the zoo GRU: 1 of 49 steps, a third of all-a16w8's cycles).
3. **Report.** One row per candidate: its gain, the precision chosen, the error and the cost
   after the move; above them, when all-a16w8 stays above a quarter of the int8 error, what
   limits it (the int8 weights' own error, the operators kept int8: limits.py). When the target cannot be met within the budget, the result says so and
   keeps the best choice found.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import torch

from kiln import KilnError
from kiln.backends.arm.quantizer.limits import int8_weights_error, what_limits_a16w8
from kiln.delegation.quantizer.recurrent import unrolled_size
from kiln.delegation.quantizer.scopes import innermost_module, input_projection_scope, step_scope


logger = logging.getLogger(__name__)


@dataclass
class LayerChoice:
    """One candidate layer: what making it alone 16-bit gains, and what the walk chose."""

    name: str
    module_type: str
    gain: float  # what keeping this layer int8 costs when every other layer is 16-bit (error rise)
    precision: str = "int8"  # "int16" once moved
    error_after: float | None = None  # the model's error after this move (None: not tried)
    npu_cycles_after: int | None = None
    sram_bytes_after: int | None = None
    note: str = ""  # why a tried move was undone


@dataclass
class PrecisionChoice:
    """The outcome of :func:`choose_precision`."""

    int16_modules: list[str]  # the chosen layers' modules (EthosUQuantizer's int16_modules)
    error: float  # of the chosen program against fp32 (relative RMS)
    int8_error: float
    npu_cycles: int | None
    sram_bytes: int | None
    int8_npu_cycles: int | None
    a16w8_error: float  # every layer 16-bit: the floor the choice can reach
    a16w8_npu_cycles: int | None
    target_met: bool
    layers: list[LayerChoice] = field(default_factory=list)
    program: Any = None  # the quantized ExportedProgram of the choice
    summary: str = ""
    # EthosUQuantizer(spec, activations=..., int16_modules=...) quantizes the same way
    activations: str = "int8"
    weights_error: float | None = None  # int8 weights, fp32 activations: a16w8's floor
    limits: list[str] = field(default_factory=list)  # what keeps all-a16w8 above int8 / 4 (limits.py)

    def table(self) -> str:
        """The per-layer report (candidates in order of gain)."""
        width = max([len("layer"), *(len(row.name) for row in self.layers)])
        lines = [self.summary, *(f"  limit: {line}" for line in self.limits),
                 f"  {'layer':<{width}}  {'type':<12}  {'gain':>9}  precision  {'error after':>11}  "
                 f"{'NPU cycles':>10}  {'SRAM':>8}  note"]
        for row in self.layers:
            after = "-" if row.error_after is None else f"{row.error_after:.3e}"
            cycles = "-" if row.npu_cycles_after is None else str(row.npu_cycles_after)
            sram = "-" if row.sram_bytes_after is None else str(row.sram_bytes_after)
            lines.append(f"  {row.name:<{width}}  {row.module_type:<12}  {row.gain:>9.2e}  {row.precision:<9}  "
                         f"{after:>11}  {cycles:>10}  {sram:>8}  {row.note}")
        return "\n".join(lines)


class PrecisionTargetError(KilnError, ValueError):
    """The error target or a budget is not a positive number, or a candidate layer named for
    the choice is not one of the model's."""


def relative_error(reference: Sequence[Sequence[np.ndarray]], values: Sequence[Sequence[np.ndarray]]) -> float:
    """``||values - reference|| / ||reference||`` over every sample and output (float64)."""
    num = den = 0.0
    for ref_outputs, outputs in zip(reference, values):
        for ref, value in zip(ref_outputs, outputs):
            ref64 = np.asarray(ref, np.float64)
            num += float(np.sum((np.asarray(value, np.float64) - ref64) ** 2))
            den += float(np.sum(ref64 ** 2))
    return (num / den) ** 0.5 if den > 0 else float(num > 0)


def outputs_of(module: Any, samples: Sequence[tuple[Any, ...]]) -> list[list[np.ndarray]]:
    results = []
    with torch.no_grad():
        for sample in samples:
            out = module(*sample)
            flat = out if isinstance(out, (tuple, list)) else (out,)
            results.append([t.detach().float().numpy() for t in flat if isinstance(t, torch.Tensor)])
    return results


# Recurrent layers are unrolled into their cells' products and sums before annotation
# (recurrent.py): those compute in 16 bits, their gates' lookup tables keep int8.
_UNROLLED = (torch.ops.aten.gru.input, torch.ops.aten.lstm.input)
_RECURRENT = (*_UNROLLED, torch.ops.aten.rnn_tanh.input)
_WEIGHTED = (torch.ops.aten.conv1d.default, torch.ops.aten.conv1d.padding, torch.ops.aten.conv2d.default,
             torch.ops.aten.conv2d.padding, torch.ops.aten.linear.default, *_RECURRENT)


@dataclass(frozen=True)
class Layer:
    """A candidate for 16 bits: the module holding a weighted operator (convolution, linear,
    recurrent layer; attention holds its input projection) and the modules after it up to
    the next weighted one (its batch norm, activation, pooling), which move with it so that
    a fused group never changes precision inside."""

    name: str  # the weighted operator's module
    module_type: str
    modules: tuple[str, ...]  # every module name that moves (the weighted one first)
    recurrent: tuple[int, int] | None = None  # a GRU/LSTM unrolled: (stacked layers, time steps)

    def parts(self, steps: int) -> list[str]:
        """The modules of a recurrent layer with only its input projections and its top
        layer's last ``steps`` time steps in 16 bits (recurrent.py's part names)."""
        assert self.recurrent is not None
        layers, length = self.recurrent
        top = layers - 1
        return [*(input_projection_scope(self.name, index) for index in range(layers)),
                *(step_scope(self.name, top, step) for step in range(length - steps, length)),
                *self.modules[1:]]


def candidate_layers(model: torch.nn.Module, example_inputs: tuple[Any, ...]) -> list[Layer]:
    """The model's weighted layers in graph order, each with the leaf modules that follow it
    (see :class:`Layer`), from the exported graph's ``nn_module_stack``."""
    from kiln.export.edge import torch_export

    exported = torch_export(model.eval(), example_inputs, what="choosing per-layer precision")
    groups: list[tuple[str, str, list[str]]] = []
    before_first: list[str] = []
    recurrent: dict[str, tuple[int, int] | None] = {}
    for node in exported.graph.nodes:
        if node.op != "call_function":
            continue
        found = innermost_module(node)
        if found is None:
            continue
        name, module_type = found
        if node.target in _WEIGHTED and not any(name == group[0] for group in groups):
            groups.append((name, module_type, [*before_first, name] if not groups else [name]))
            before_first = []
            if node.target in _UNROLLED:
                recurrent[name] = unrolled_size(node)
            continue
        owner = groups[-1][2] if groups else before_first
        if name not in owner and not any(name in group[2] for group in groups):
            owner.append(name)
    return [Layer(name, module_type, tuple(dict.fromkeys([name, *modules])), recurrent.get(name))
            for name, module_type, modules in groups]


class _Evaluator:
    """Quantizes ``model`` with a set of 16-bit modules, measures the error, compiles for cost."""

    def __init__(self, model: torch.nn.Module, example_inputs: tuple[Any, ...],
                 calibration: Sequence[tuple[Any, ...]], compile_spec: Any) -> None:
        self.model = model
        self.inputs = example_inputs
        self.calibration = list(calibration)
        self.spec = compile_spec
        self.reference = outputs_of(model, self.calibration)
        self.last_quantizer: Any = None  # the quantizer of the latest quantize()

    def quantize(self, int16_modules: Sequence[str], activations: str = "int8",
                 int8_modules: Sequence[str] = ()) -> tuple[Any, float]:
        import kiln
        from kiln.delegation.quantizer.config import get_symmetric_quantization_config
        from kiln.backends.arm.quantizer.quantizer import EthosUQuantizer

        quantizer = EthosUQuantizer(self.spec, activations=activations, int16_modules=list(int16_modules))
        for name in int8_modules:
            quantizer.set_module_name(name, get_symmetric_quantization_config())
        program = kiln.quantize(self.model, self.inputs, quantizer, self.calibration, progress=False)
        self.last_quantizer = quantizer
        return program, relative_error(self.reference, outputs_of(program.module(), self.calibration))

    def cost(self, program: Any) -> tuple[int | None, int | None]:
        """(NPU cycles, SRAM bytes) of the delegated program: sums over its delegates
        (SRAM: the largest, since delegates run one after the other)."""
        import kiln
        from kiln.backends.arm.partitioner import EthosUPartitioner

        report = kiln.export(program, partitioner=EthosUPartitioner(self.spec)).compile_report
        delegates = report.delegates if report is not None else []
        if not delegates:
            return None, None
        cycles = sum(int(d.report.npu_cycles or 0) for d in delegates)
        sram = max(int(d.report.sram_bytes or 0) for d in delegates)
        return cycles, sram


def _shortest_output_run(evaluator: _Evaluator, layers: Sequence[Layer], max_error: float,
                         max_cycles: int | None, max_sram: int | None) -> tuple[list[str], Any, float, Any, Any] | None:
    """The fewest last layers (graph order) whose 16 bits meet ``max_error`` within the budget:
    (names, program, error, NPU cycles, SRAM), or None. Such a run costs no requantization
    pass (its first layer reads the int8 tensor before it as it is, and the model's output is
    dequantized on the CPU either way), where a mix with int8 layers after 16-bit ones
    requantizes before each; every layer in 16 bits is not a run (all-a16w8 is its own
    candidate)."""
    for start in range(len(layers) - 1, 0, -1):
        names = [layer.name for layer in layers[start:]]
        program, error = evaluator.quantize([m for layer in layers[start:] for m in layer.modules])
        logger.info("last %d layers in 16 bits: error %.3e (target %.3e)", len(names), error, max_error)
        if error > max_error:
            continue
        cycles, sram = evaluator.cost(program)
        if _over_budget(cycles, sram, max_cycles, max_sram):
            return None  # a longer run costs more
        return names, program, error, cycles, sram
    return None


def _recurrent_parts(evaluator: _Evaluator, layers: Sequence[Layer], chosen: Sequence[str],
                     rows: Sequence[LayerChoice], max_error: float, cycles: int | None,
                     max_cycles: int | None, max_sram: int | None) -> tuple[list[str], Any, float, Any, Any,
                                                                           list[str]] | None:
    """A chosen GRU/LSTM with only its input projection and its last time steps in 16 bits,
    where that meets ``max_error`` for fewer NPU cycles than the whole layer in 16 bits:
    (modules, program, error, NPU cycles, SRAM, the layers in part), or None. Every step
    costs the same, and an early step's rounding fades through the recurrence where a late
    one reaches the output, so the steps counted from the end double (0, 1, 2, 4 ...) until
    the target is met; the input projection is one pass over all steps and sets the floor
    (int8 inputs to the gates of every step)."""
    modules = {layer.name: list(layer.modules) for layer in layers if layer.name in chosen}
    found = None
    parted = []
    for layer in layers:
        if layer.name not in modules or layer.recurrent is None:
            continue
        length = layer.recurrent[1]
        steps = 0
        while steps < length:
            modules[layer.name] = layer.parts(steps)
            program, error = evaluator.quantize([m for names in modules.values() for m in names])
            logger.info("%s: input projection and last %d of %d steps in 16 bits: error %.3e (target %.3e)",
                        layer.name, steps, length, error, max_error)
            if error <= max_error:
                break
            steps = max(1, 2 * steps)
        if steps >= length:
            modules[layer.name] = list(layer.modules)
            continue
        step_cycles, sram = evaluator.cost(program)
        if step_cycles is None or (cycles is not None and step_cycles >= cycles) or \
                _over_budget(step_cycles, sram, max_cycles, max_sram):
            modules[layer.name] = list(layer.modules)
            continue
        cycles = step_cycles
        parted.append(layer.name)
        found = ([m for names in modules.values() for m in names], program, error, step_cycles, sram, parted)
        for row in rows:
            if row.name == layer.name:
                row.precision = "int16"
                row.error_after, row.npu_cycles_after, row.sram_bytes_after = error, step_cycles, sram
                row.note = f"input projection and last {steps} of {length} steps in 16 bits"
    return found


def _over_budget(cycles: int | None, sram: int | None, max_cycles: int | None, max_sram: int | None) -> list[str]:
    over = []
    if max_cycles is not None and cycles is not None and cycles > max_cycles:
        over.append(f"{cycles} NPU cycles > {max_cycles}")
    if max_sram is not None and sram is not None and sram > max_sram:
        over.append(f"SRAM {sram} B > {max_sram}")
    return over


def _check_positive(name: str, value: float | None) -> None:
    if value is not None and not (isinstance(value, (int, float)) and value > 0):
        raise PrecisionTargetError(f"{name} must be a positive number, got {value!r}")


def choose_precision(model: torch.nn.Module, example_inputs: tuple[Any, ...],
                     calibration: Sequence[tuple[Any, ...]], compile_spec: Any, *,
                     max_error: float, max_npu_cycles: int | None = None, max_sram_bytes: int | None = None,
                     candidates: Sequence[str] | None = None) -> PrecisionChoice:
    """Moves the layers that matter most to 16-bit activations until the model's error against
    fp32 on ``calibration`` is at most ``max_error`` (relative RMS) or no move fits the
    budget (``max_npu_cycles``, ``max_sram_bytes``: Vela's estimates for the delegated
    program). ``candidates`` restricts the walk to these module names (default: every leaf
    module with a 16-bit operator). See the module docstring."""
    _check_positive("max_error", max_error)
    _check_positive("max_npu_cycles", max_npu_cycles)
    _check_positive("max_sram_bytes", max_sram_bytes)
    from kiln.quantize.driver import check_calibration_sample

    inputs = tuple(example_inputs)
    samples = [s if isinstance(s, tuple) else (s,) for s in calibration]
    for index, sample in enumerate(samples):
        check_calibration_sample(sample, index, inputs)
    evaluator = _Evaluator(model.eval(), inputs, samples, compile_spec)
    layers = candidate_layers(model, inputs)
    if candidates is not None:
        known = {layer.name: layer for layer in layers}
        unknown = [name for name in candidates if name not in known]
        if unknown:
            raise PrecisionTargetError(f"no 16-bit candidate layer named {', '.join(unknown)} "
                                       f"(candidates: {', '.join(known) or 'none'})")
        layers = [known[name] for name in candidates]
    modules_of = {layer.name: layer.modules for layer in layers}

    int8_program, int8_error = evaluator.quantize([])
    int8_cycles, int8_sram = evaluator.cost(int8_program)
    a16w8_program, a16w8_error = evaluator.quantize([], activations="int16")
    a16w8_kept = evaluator.last_quantizer.kept_int8
    a16w8_cycles, a16w8_sram = evaluator.cost(a16w8_program)
    weights_error = int8_weights_error(evaluator.model, evaluator.calibration, evaluator.reference)
    limits = what_limits_a16w8(int8_error, a16w8_error, weights_error, a16w8_kept)
    rows = []
    for layer in layers:
        _, error = evaluator.quantize([], activations="int16", int8_modules=layer.modules)
        rows.append(LayerChoice(layer.name, layer.module_type, error - a16w8_error))
        logger.info("every layer but %s in 16 bits: error %.3e (all a16w8 %.3e)", layer.name, error, a16w8_error)
    rows.sort(key=lambda row: -row.gain)

    chosen: list[str] = []
    error = int8_error
    best = ([], int8_program, int8_error, int8_cycles, int8_sram)
    for row in rows:
        if error <= max_error:
            break
        program, error_after = evaluator.quantize([m for name in [*chosen, row.name] for m in modules_of[name]])
        cycles, sram = evaluator.cost(program)
        row.error_after, row.npu_cycles_after, row.sram_bytes_after = error_after, cycles, sram
        over = _over_budget(cycles, sram, max_npu_cycles, max_sram_bytes)
        if over:
            row.note = "undone: " + ", ".join(over)
            continue
        # Kept even when the error does not drop yet: a 16-bit tensor needs its producer and
        # its consumer in 16 bits, and the next move may be the other one.
        row.precision = "int16"
        chosen.append(row.name)
        error = error_after
        if error < best[2]:
            best = (list(chosen), program, error, cycles, sram)
    best_chosen, program, error, cycles, sram = best
    for row in rows:
        if row.precision == "int16" and row.name not in best_chosen:
            row.precision, row.note = "int8", "undone: a later state was no better"
    chosen = best_chosen
    activations = "int8"
    how = "greedy"
    run = _shortest_output_run(evaluator, layers, max_error, max_npu_cycles, max_sram_bytes)
    if run is not None and (error > max_error or (run[3] is not None and cycles is not None and run[3] < cycles)):
        chosen, program, error, cycles, sram = run
        how = "output run"
        for row in rows:
            row.precision = "int16" if row.name in chosen else "int8"
            if row.precision == "int16" and row.note.startswith("undone"):
                row.note = ""
    mix_met = error <= max_error
    # Every boundary between int8 and 16-bit layers is a requantization pass, and operators
    # outside the candidates' modules stay int8 in a mix: all layers in 16 bits win when they
    # meet the target at no more cost than the mix, or when the mix misses it and they do better.
    all_wins = (not mix_met and a16w8_error < error) or \
        (mix_met and a16w8_error <= max_error and a16w8_cycles is not None and cycles is not None
         and a16w8_cycles <= cycles)
    if all_wins:
        if not _over_budget(a16w8_cycles, a16w8_sram, max_npu_cycles, max_sram_bytes):
            for row in rows:
                if row.precision != "int16":
                    row.note = (row.note + "; " if row.note else "") + "16-bit: all layers in 16 bits beat the mix"
                row.precision = "int16"
            chosen = [layer.name for layer in layers]
            program, error, cycles, sram = a16w8_program, a16w8_error, a16w8_cycles, a16w8_sram
            activations = "int16"
    modules = [] if activations == "int16" else [m for name in chosen for m in modules_of[name]]
    how = "all layers" if activations == "int16" else how
    if error <= max_error:
        parts = _recurrent_parts(evaluator, layers, chosen, rows, max_error, cycles, max_npu_cycles, max_sram_bytes)
        if parts is not None:
            modules, program, error, cycles, sram, parted = parts
            activations, how = "int8", f"{how}; {', '.join(parted)} in part"
    met = error <= max_error
    summary = (f"per-layer precision for {getattr(compile_spec, 'target', compile_spec)}: "
               f"{len(chosen)} of {len(rows)} layers 16-bit ({how}), error vs fp32 {error:.3e} "
               f"(target {max_error:.3e}: {'met' if met else 'NOT met, best found'}; all int8 {int8_error:.3e}, "
               f"all a16w8 {a16w8_error:.3e}), NPU cycles {cycles} (all int8 {int8_cycles}, all a16w8 {a16w8_cycles})")
    return PrecisionChoice(modules, error, int8_error, cycles, sram, int8_cycles, a16w8_error, a16w8_cycles, met,
                           rows, program, summary, activations, weights_error, limits)
