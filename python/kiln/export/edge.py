"""From an ``nn.Module`` to a core-ATen ExportedProgram (the "edge" program).

This is the first stage of :func:`kiln.export`; backends that partition the
graph (e.g. Ethos-U) start from its result.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import warnings
from typing import Any

import torch
from torch.export import ExportedProgram

from kiln import ExportError
from kiln.passes.as_strided import rewrite_as_strided

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


def _describe(error: BaseException, limit: int = _MAX_CAUSE_CHARS) -> str:
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


def torch_export(model: torch.nn.Module, inputs: tuple[Any, ...], dynamic_shapes: Any = None, *,
                 what: str = "") -> ExportedProgram:
    """``torch.export.export(model, inputs)``: non-strict, and strict where non-strict fails
    (see :class:`TorchExportError`, raised when both fail; ``what`` says what the export is
    for in its message)."""
    printed = io.StringIO()
    try:
        # torch prints the partial graph when a non-strict trace fails: only the reason matters.
        with contextlib.redirect_stdout(printed):
            exported = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes, strict=False)
        sys.stdout.write(printed.getvalue())  # the model's own prints
        return exported
    except Exception as error:  # torch raises many unrelated types here
        non_strict = error
    try:
        exported = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes, strict=True)
    except Exception as error:
        raise TorchExportError(type(model).__name__, what, _describe(non_strict), _describe(error)) from error
    logger.info("exported %s with TorchDynamo (strict): the non-strict export failed: %s",
                type(model).__name__, _describe(non_strict, 300))
    return exported


def export_to_edge(model: torch.nn.Module, example_inputs: Any, dynamic_shapes: Any = None) -> ExportedProgram:
    """Export ``model`` with ``torch.export`` and decompose it to core ATen (with its
    ``as_strided`` reads in Kiln's terms: :mod:`kiln.passes.as_strided`).

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
        edge = exported.run_decompositions()
    except Exception as error:
        raise ExportError(
            f"decomposing {model_name} to core ATen failed: {_describe(error)}"
        ) from error
    rewrite_as_strided(edge)
    return edge
