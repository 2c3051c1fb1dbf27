"""From an ``nn.Module`` to a core-ATen ExportedProgram (the "edge" program).

This is the first stage of :func:`kiln.export`; backends that partition the
graph (e.g. Ethos-U) start from its result. It is also where :mod:`kiln.quantize` takes its
converted model back to core ATen (:func:`export_core_aten`): one definition of core ATen
(:func:`core_aten_decompositions`) for both, a quantized program keeping
``QUANTIZED_KEPT_WHOLE`` whole.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import torch
from torch.export import ExportedProgram

from kiln import ExportError
from kiln.passes.as_strided import rewrite_as_strided
from kiln.passes.broadcast_matmul import fold_broadcast_matmuls

logger = logging.getLogger(__name__)

# Longest part of torch's message kept in an ExportError (torch's can be pages long).
_MAX_CAUSE_CHARS = 2000


def normalize_inputs(example_inputs: Any) -> tuple[Any, ...]:
    """``example_inputs`` as a tuple: a single tensor or a list is accepted too."""
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, list):
        return tuple(example_inputs)
    if not isinstance(example_inputs, tuple):
        raise ExportError(
            f"example_inputs must be a tuple of tensors (and ints, floats, bools), got "
            f"{type(example_inputs).__name__}"
        )
    return example_inputs


def _behaves_differently_in_training(model: torch.nn.Module) -> bool:
    """True if ``model`` is in training mode and has BatchNorm or Dropout layers."""
    training_sensitive = (torch.nn.modules.batchnorm._NormBase, torch.nn.modules.dropout._DropoutNd)
    return any(m.training and isinstance(m, training_sensitive) for m in model.modules())


def describe_error(error: BaseException, limit: int = _MAX_CAUSE_CHARS) -> str:
    """``Type: message`` of ``error``, cut to ``limit`` characters (torch's can be pages long)."""
    text = str(error).strip() or type(error).__name__
    if len(text) > limit:
        text = text[:limit] + " ..."
    return f"{type(error).__name__}: {text}"


class TorchExportError(ExportError):
    """torch.export failed for a model both ways Kiln tries it.

    Kiln exports non-strict first (it traces the Python code as it runs: fast, and it takes
    most models), then strict (TorchDynamo: it captures code that reads a tensor's value
    into a Python int, such as ``int(lengths.max())``, which non-strict tracing cannot
    specialise). The message gives both of torch's reasons.

    Attributes:
        non_strict: torch's reason for the non-strict export.
        strict: torch's reason for the strict export.
    """

    def __init__(self, model_name: str, what: str, non_strict: str, strict: str) -> None:
        context = f" ({what})" if what else ""
        super().__init__(f"torch.export failed for {model_name}{context}, non-strict: {non_strict}; "
                         f"strict (TorchDynamo): {strict}")
        self.non_strict = non_strict
        self.strict = strict


@contextlib.contextmanager
def _without_rnn_weight_warning() -> Iterator[None]:
    """Silences the warning torch.export gives for every nn.GRU/LSTM/RNN: their forward
    re-assigns their own ``_flat_weights`` list, and torch asks the user to register as
    buffers attributes the user never wrote (once per export, and Kiln exports a model
    several times: quantization, the per-layer precision choice)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"The tensor attributes .*_flat_weights", category=UserWarning)
        yield


def torch_export(model: torch.nn.Module, inputs: tuple[Any, ...], dynamic_shapes: Any = None, *,
                 what: str = "") -> ExportedProgram:
    """``torch.export.export(model, inputs)``: non-strict, and strict where non-strict fails
    (see :class:`TorchExportError`, raised when both fail; ``what`` says what the export is
    for in its message)."""
    printed = io.StringIO()
    try:
        # torch prints the partial graph when a non-strict trace fails: only the reason matters.
        with contextlib.redirect_stdout(printed), _without_rnn_weight_warning():
            exported = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes, strict=False)
        sys.stdout.write(printed.getvalue())  # the model's own prints
        return exported
    except Exception as error:  # torch raises many unrelated types here
        non_strict = error
    try:
        with _without_rnn_weight_warning():
            exported = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes, strict=True)
    except Exception as error:
        raise TorchExportError(type(model).__name__, what, describe_error(non_strict), describe_error(error)) from error
    logger.info("exported %s with TorchDynamo (strict): the non-strict export failed: %s",
                type(model).__name__, describe_error(non_strict, 300))
    return exported


def export_to_edge(model: torch.nn.Module, example_inputs: Any, dynamic_shapes: Any = None) -> ExportedProgram:
    """Export ``model`` with ``torch.export`` and decompose it to core ATen (with what torch
    laid out by eager strides in Kiln's terms: :func:`normalize_core_aten`).

    Args:
        model: the module to compile. Put it in eval mode first (BatchNorm and
            Dropout in training mode have no inference kernels).
        example_inputs: a tuple of example inputs: tensors, and ints, floats or bools
            (a single tensor is accepted).
        dynamic_shapes: torch.export's ``dynamic_shapes`` (e.g. ``{"x": {0:
            torch.export.Dim("batch", max=8)}}``); every dynamic size needs a maximum.

    Returns:
        The core-ATen :class:`~torch.export.ExportedProgram`.

    Raises:
        ExportError: ``model`` is not a module, or the decomposition failed (torch's
            reason is in the message and ``__cause__``); :class:`TorchExportError`:
            torch.export failed both non-strict and strict.
    """
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    inputs = normalize_inputs(example_inputs)
    if _behaves_differently_in_training(model):
        logger.warning(
            "%s is in training mode; exporting it as is. Call model.eval() for inference.",
            type(model).__name__,
        )
    with warnings.catch_warnings():
        # torch 2.13's own pytree code trips its LeafSpec deprecation warning while
        # exporting and decomposing; it says nothing about the user's model.
        warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
        return _export_and_decompose(model, inputs, dynamic_shapes)


def _export_and_decompose(model: torch.nn.Module, inputs: tuple[Any, ...], dynamic_shapes: Any) -> ExportedProgram:
    model_name = type(model).__name__
    exported = torch_export(model, inputs, dynamic_shapes)
    try:
        edge = exported.run_decompositions(core_aten_decompositions())
    except Exception as error:
        raise ExportError(
            f"decomposing {model_name} to core ATen failed: {describe_error(error)}"
        ) from error
    normalize_core_aten(edge)
    return edge


def normalize_core_aten(program: ExportedProgram) -> None:
    """Writes (in place) what torch's decomposition laid out by eager strides in the terms of
    Kiln's always row-major tensors: ``as_strided`` reads as views or copies
    (:mod:`kiln.passes.as_strided`), a fully connected layer on a transposed input as one
    matrix product (:mod:`kiln.passes.broadcast_matmul`)."""
    rewrite_as_strided(program)
    fold_broadcast_matmuls(program)


#: Unary ops a quantized program keeps whole: each is one TOSA TABLE (lookup) op on the NPU
#: and one portable kernel on the CPU; decomposed, hardswish would become add/clamp/div/mul
#: in float between one quantize/dequantize pair, which no backend can match back. (A float
#: program takes torch's core ATen as it is: hardswish decomposed.)
QUANTIZED_KEPT_WHOLE: tuple[Any, ...] = (
    torch.ops.aten.hardswish.default,
    torch.ops.aten.hardsigmoid.default,
)


def core_aten_decompositions(kept_whole: tuple[Any, ...] = ()) -> dict[Any, Any]:
    """torch's core-ATen decomposition table, less the decompositions of ``kept_whole``."""
    table = torch.export.default_decompositions()
    for op in kept_whole:
        table.pop(op, None)
    return table


def export_core_aten(module: torch.nn.Module, inputs: tuple[Any, ...], *,
                     kept_whole: tuple[Any, ...] = ()) -> ExportedProgram:
    """Exports ``module`` straight to core ATen (keeping ``kept_whole``), tracing it once
    where torch allows.

    The public route (torch.export.export, then run_decompositions) traces the graph
    twice; on MobileNetV2's quantized graph that is ~11 s against ~5 s for one trace
    to ATen IR (torch.export's internal ``pre_dispatch=False`` mode). ATen IR differs
    from core ATen only in ops that the core table decomposes further: the few that
    become one other op are rewritten here (:func:`_rewrite_to_core`), anything else
    falls back to run_decompositions.
    """
    table = core_aten_decompositions(kept_whole)
    try:
        from torch.export._trace import _export  # internal: one trace to ATen IR
    except ImportError:
        _export = None
    kept_composites = _composite_ops_core_aten_keeps(module.graph, table)
    if _export is None or kept_composites:
        logger.debug("exporting in two traces: core ATen keeps %s", ", ".join(kept_composites) or "-")
        return torch.export.export(module, inputs, strict=False).run_decompositions(table)
    program = _export(module, inputs, strict=False, pre_dispatch=False)
    _rewrite_to_core(program)
    if _non_core_ops(program.graph, table, kept_whole):
        program = program.run_decompositions(table)
    return program


def _composite_ops_core_aten_keeps(graph: torch.fx.Graph, table: dict[Any, Any]) -> list[str]:
    """Composite (CompositeImplicitAutograd) operators of ``graph`` that core ATen keeps
    whole, e.g. ``upsample_nearest2d.vec``. A trace to ATen IR always decomposes them
    (nearest upsampling into arange + index), so a graph with one takes the public
    route, where run_decompositions decomposes only what ``table`` lists."""
    kept = []
    for node in graph.nodes:
        target = node.target
        if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            continue
        if target in table or not target.has_kernel_for_dispatch_key(_COMPOSITE_IMPLICIT):
            continue
        if torch.Tag.core in target.tags:
            kept.append(str(target))
    return kept


_COMPOSITE_IMPLICIT = torch._C.DispatchKey.CompositeImplicitAutograd


def _rewrite_to_core(program: ExportedProgram) -> None:
    """Rewrites the ATen IR ops whose core-ATen form is one other op: ``t`` and
    ``transpose`` are ``permute``, ``_unsafe_view`` is ``view`` (it differs only in
    what autograd may assume about aliasing)."""
    changed = False
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target in (torch.ops.aten.t.default, torch.ops.aten.transpose.int):
            source = node.args[0]
            rank = source.meta["val"].dim()
            order = list(range(rank))
            if node.target is torch.ops.aten.t.default:
                first, second = (0, 1) if rank == 2 else (0, 0)
            else:
                first, second = (d % rank for d in node.args[1:3])
            order[first], order[second] = order[second], order[first]
            node.target = torch.ops.aten.permute.default
            node.args = (source, order)
            changed = True
        elif node.target is torch.ops.aten._unsafe_view.default:
            node.target = torch.ops.aten.view.default
            changed = True
    if changed:
        program.graph_module.recompile()


def _non_core_ops(graph: torch.fx.Graph, table: dict[Any, Any], kept_whole: tuple[Any, ...]) -> list[str]:
    """Operators left in ``graph`` that core ATen (with ``kept_whole``) would decompose."""
    left = []
    for node in graph.nodes:
        target = node.target
        if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            continue
        if target.namespace != "aten" or target in kept_whole:
            continue
        if torch.Tag.core not in target.tags or target in table:
            left.append(str(target))
    return left
