"""The PT2E quantization flow: export -> prepare -> calibrate (or train) -> convert -> core ATen.

The result is the standard PT2E reference form: float ops between
``quantized_decomposed`` quantize/dequantize pairs, int8 weight constants followed by
``dequantize_per_channel``, batch norms folded into the convolutions. Backends
(Ethos-U TOSA lowering) pattern-match the q/dq pairs; the CPU path runs the graph
as is.
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from typing import Any, Iterable, Iterator

import torch
from torch.export import ExportedProgram
from torch.fx import GraphModule
from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
from torchao.quantization.pt2e.quantizer import Quantizer

from kiln import ExportError, KilnError
from kiln.export.edge import QUANTIZED_KEPT_WHOLE, describe_error, export_core_aten, normalize_inputs, torch_export
from kiln.passes.as_strided import rewrite_as_strided
from kiln.passes.quantization_parameters import check_calibrated_ranges
from kiln.passes.safe_softmax import fold_safe_softmax_guards
from kiln.quantize.progress import track

logger = logging.getLogger("kiln.quantize")

_EXAMPLE_INPUTS_KEY = "kiln_example_inputs"
_BATCH_NORMS = {
    torch.ops.aten.batch_norm.default,
    torch.ops.aten._native_batch_norm_legit_no_training.default,
    torch.ops.aten._native_batch_norm_legit.default,
    torch.ops.aten.cudnn_batch_norm.default,
}


class QuantizationError(KilnError):
    """The quantization flow failed (prepare, calibration or convert), with torch's reason."""


def _export_module(model: torch.nn.Module, inputs: tuple[Any, ...], what: str) -> GraphModule:
    """torch.export, then the graph as a module PT2E can annotate."""
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
        exported = torch_export(model, inputs, what=what)
    # torch 2.13's input guards would reject PT2E's call_module observers.
    module = exported.module(check_guards=False)
    module.meta[_EXAMPLE_INPUTS_KEY] = inputs
    return module


def prepare(model: torch.nn.Module, example_inputs: Any, quantizer: Quantizer) -> GraphModule:
    """Exports ``model`` (eval mode) and inserts the quantizer's observers (PTQ)."""
    inputs = normalize_inputs(example_inputs)
    if model.training:
        logger.warning("%s is in training mode; post-training quantization wants model.eval()",
                       type(model).__name__)
    module = _export_module(model, inputs, "post-training quantization")
    try:
        prepared = prepare_pt2e(module, quantizer)
    except Exception as error:
        raise QuantizationError(f"preparing {type(model).__name__} for quantization failed: "
                                f"{describe_error(error)}") from error
    prepared.meta[_EXAMPLE_INPUTS_KEY] = inputs
    return prepared


def prepare_qat(model: torch.nn.Module, example_inputs: Any, quantizer: Quantizer) -> GraphModule:
    """Exports ``model`` in training mode and inserts fake quantizers (QAT).

    Train the returned module like the original (its batch norms update their
    statistics and are folded by :func:`convert`), then call :func:`convert`.
    The quantizer's configs should be QAT configs (``EthosUQuantizer(spec, is_qat=True)``).
    """
    inputs = normalize_inputs(example_inputs)
    was_training = model.training
    model.train()
    try:
        module = _export_module(model, inputs, "quantization-aware training")
    finally:
        model.train(was_training)
    try:
        prepared = prepare_qat_pt2e(module, quantizer)
    except Exception as error:
        raise QuantizationError(f"preparing {type(model).__name__} for QAT failed: {describe_error(error)}") from error
    prepared.meta[_EXAMPLE_INPUTS_KEY] = inputs
    move_exported_model_to_train(prepared)
    return prepared


class CalibrationDataError(QuantizationError):
    """A calibration sample does not match the example inputs (count, shape or dtype).

    Attributes:
        sample: index of the sample; position: index of the input within it (None when the
        count differs).
    """

    def __init__(self, message: str, sample: int, position: int | None) -> None:
        super().__init__(message)
        self.sample = sample
        self.position = position


def check_calibration_sample(sample: Any, index: int, example_inputs: tuple[Any, ...]) -> None:
    """Raises :class:`CalibrationDataError` unless ``sample`` has the example inputs' tensors:
    the same count, shapes and dtypes (observers would measure the wrong tensors, or the
    graph exported for those shapes would fail deep inside with torch's error)."""
    args = _as_args(sample)
    if len(args) != len(example_inputs):
        raise CalibrationDataError(f"calibration sample {index} has {len(args)} inputs; the model's example "
                                   f"inputs are {len(example_inputs)}", index, None)
    for position, (given, expected) in enumerate(zip(args, example_inputs)):
        if not isinstance(expected, torch.Tensor):
            continue
        if not isinstance(given, torch.Tensor):
            raise CalibrationDataError(f"calibration sample {index}, input {position}: expected a tensor, got "
                                       f"{type(given).__name__}", index, position)
        if tuple(given.shape) != tuple(expected.shape) or given.dtype != expected.dtype:
            raise CalibrationDataError(
                f"calibration sample {index}, input {position}: {given.dtype} {tuple(given.shape)} does not match "
                f"the example input's {expected.dtype} {tuple(expected.shape)}", index, position)


def _as_args(sample: Any) -> tuple[Any, ...]:
    return sample if isinstance(sample, tuple) else (tuple(sample) if isinstance(sample, list) else (sample,))


def _constant_observers(prepared: GraphModule) -> list[torch.nn.Module]:
    """Observer modules whose input depends on constants only (the weights): what they
    measure is the same for every sample."""
    from torchao.quantization.pt2e import ObserverBase

    constant: set[torch.fx.Node] = set()
    observers = []
    for node in prepared.graph.nodes:
        if node.op == "get_attr":
            constant.add(node)
        elif node.op in ("call_function", "call_module") and node.all_input_nodes \
                and all(source in constant for source in node.all_input_nodes):
            constant.add(node)
            if node.op == "call_module":
                module = prepared.get_submodule(str(node.target))
                if isinstance(module, ObserverBase):
                    observers.append(module)
    return observers


def _pass_through(x: torch.Tensor) -> torch.Tensor:
    return x


def calibrate(prepared: GraphModule, samples: Iterable[Any], *, progress: bool = True) -> int:
    """Runs ``prepared`` on every sample (a tuple of inputs, or one tensor); returns the count.
    A sample whose tensors differ from the example inputs in count, shape or dtype raises
    :class:`CalibrationDataError`.

    Weight observers see their constant weight on the first sample only (later samples
    would recompute the same per-channel ranges: a quarter of a MobileNetV2 pass).
    """
    count = 0
    example_inputs = prepared.meta.get(_EXAMPLE_INPUTS_KEY)
    weight_observers = _constant_observers(prepared)
    try:
        with torch.no_grad():
            for sample in track(samples, "calibrating", enabled=progress):
                if example_inputs is not None:
                    check_calibration_sample(sample, count, example_inputs)
                try:
                    prepared(*_as_args(sample))
                except Exception as error:
                    raise QuantizationError(f"calibration sample {count} failed: {describe_error(error)}") from error
                if count == 0:
                    for observer in weight_observers:
                        observer.forward = _pass_through  # instance attribute: shadows the class's forward
                count += 1
    finally:
        for observer in weight_observers:
            observer.__dict__.pop("forward", None)
    if count == 0:
        raise QuantizationError("calibration_data is empty: observers would have no ranges")
    return count


def convert(prepared: GraphModule, example_inputs: Any = None) -> ExportedProgram:
    """Replaces observers by quantize/dequantize ops and re-exports to core ATen.

    ``example_inputs`` defaults to those given to :func:`prepare` / :func:`prepare_qat`.
    """
    inputs = normalize_inputs(example_inputs) if example_inputs is not None \
        else prepared.meta.get(_EXAMPLE_INPUTS_KEY)
    if inputs is None:
        raise QuantizationError("convert() needs example_inputs: the module was not prepared by kiln.quantize")
    if _has_training_behaviour(prepared.graph):
        move_exported_model_to_eval(prepared)
    check_calibrated_ranges(prepared)
    try:
        with _fold_only_present_convolutions():
            converted = convert_pt2e(prepared, fold_quantize=True)
    except Exception as error:
        raise QuantizationError(f"converting the calibrated model failed: {describe_error(error)}") from error
    _log_leftover_batch_norms(converted)
    _drop_unused_tensors(converted)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
            program = export_core_aten(converted, inputs, kept_whole=QUANTIZED_KEPT_WHOLE)
    except Exception as error:
        raise ExportError(f"re-exporting the quantized model failed: {describe_error(error)}") from error
    # Decomposing restrides some results as eager laid them out (a channels-last global
    # pool): the program says in Kiln's terms what those reads are.
    rewrite_as_strided(program)
    # A softmax of dequantized scores never sees a row of -inf: its NaN guard is dead code.
    fold_safe_softmax_guards(program)
    return program


def _has_training_behaviour(graph: torch.fx.Graph) -> bool:
    """True if a dropout or batch norm of ``graph`` runs in training mode.

    torchao's switch to eval mode rewrites exactly those (~11 s: it traces its
    patterns with dynamo on every call); a model exported in eval mode for
    post-training quantization has none, and skips it.
    """
    for node in graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        for index, argument in enumerate(node.target._schema.arguments):
            if argument.name not in ("train", "training"):
                continue
            value = node.args[index] if index < len(node.args) else node.kwargs.get(argument.name)
            if value is True:
                return True
    return False


# The ATen ops each convolution kind of torchao's QAT conv-bn folding matches.
_CONVOLUTION_OPS = {
    "conv1d": {"conv1d"}, "conv2d": {"conv2d"},
    "conv_transpose1d": {"conv_transpose1d"}, "conv_transpose2d": {"conv_transpose2d"},
}


@contextlib.contextmanager
def _fold_only_present_convolutions() -> Iterator[None]:
    """torchao folds QAT conv-bn pairs by exporting ~30 match/replacement patterns per
    convolution kind (conv1d/2d, transposed 1d/2d), ~1 s each, whether or not the model
    has that kind. Skip the kinds the graph does not hold (a graph with a generic
    ``aten.convolution`` keeps every kind)."""
    try:
        from torchao.quantization.pt2e import qat_utils
        helper = qat_utils._fold_conv_bn_qat_helper
    except (ImportError, AttributeError):
        yield
        return

    def only_present(m: GraphModule, conv_fn: Any, *args: Any, **kwargs: Any) -> GraphModule:
        names = {getattr(n.target, "__name__", "").split(".")[0] for n in m.graph.nodes if n.op == "call_function"}
        wanted = _CONVOLUTION_OPS.get(getattr(conv_fn, "__name__", ""))
        if wanted is not None and "convolution" not in names and not wanted & names:
            return m
        return helper(m, conv_fn, *args, **kwargs)

    qat_utils._fold_conv_bn_qat_helper = only_present
    try:
        yield
    finally:
        qat_utils._fold_conv_bn_qat_helper = helper


def _drop_unused_tensors(module: GraphModule) -> None:
    """Deletes parameters/buffers no node reads (the float weights that convert replaced
    by int8 constants), so the re-exported program does not carry them as inputs."""
    used = {n.target for n in module.graph.nodes if n.op == "get_attr"}
    names = [name for name, _ in module.named_parameters(remove_duplicate=False)]
    names += [name for name, _ in module.named_buffers(remove_duplicate=False)]
    for name in names:
        if name in used:
            continue
        owner_path, _, attribute = name.rpartition(".")
        owner = module.get_submodule(owner_path) if owner_path else module
        if hasattr(owner, attribute):
            delattr(owner, attribute)


def _log_leftover_batch_norms(module: GraphModule) -> None:
    """Batch norms that followed no convolution stay float (they run on the CPU)."""
    left = [n.name for n in module.graph.nodes if n.op == "call_function" and n.target in _BATCH_NORMS]
    if left:
        logger.info("batch norms not folded into a convolution (kept float): %s", ", ".join(left))


def quantize(
    model: torch.nn.Module,
    example_inputs: Any,
    quantizer: Quantizer,
    calibration_data: Iterable[Any] | None = None,
    *,
    progress: bool = True,
) -> ExportedProgram:
    """Post-training quantization of ``model`` with ``quantizer``, calibrated on samples.

    Args:
        model: the float model, in eval mode.
        example_inputs: tuple of example tensors (shapes are baked in).
        quantizer: a torchao PT2E ``Quantizer``, e.g. ``EthosUQuantizer(spec)``.
        calibration_data: samples from the deployment distribution, each a tuple of
            inputs (or one tensor). None calibrates on ``example_inputs`` alone, which
            gives ranges that fit only that input.
        progress: show a progress bar (tqdm if installed, else log lines).

    Returns:
        A core-ATen ExportedProgram with quantize/dequantize ops (PT2E reference form).
    """
    started = time.perf_counter()
    inputs = normalize_inputs(example_inputs)
    prepared = prepare(model, inputs, quantizer)
    prepared_at = time.perf_counter()
    if calibration_data is None:
        logger.info("no calibration_data: calibrating on the example inputs only")
        calibration_data = [inputs]
    count = calibrate(prepared, calibration_data, progress=progress)
    calibrated_at = time.perf_counter()
    program = convert(prepared, inputs)
    record_precision = getattr(quantizer, "record_precision", None)
    if record_precision is not None:  # what a quantizer could not give the precision asked for
        record_precision(program)
    logger.info("quantized %s: export+prepare %.2f s, calibration %.2f s (%d samples), convert+export %.2f s",
                type(model).__name__, prepared_at - started, calibrated_at - prepared_at, count,
                time.perf_counter() - calibrated_at)
    return program
