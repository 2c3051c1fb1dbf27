"""From an ``nn.Module`` to a core-ATen ExportedProgram (the "edge" program).

This is the first stage of :func:`kiln.export`; backends that partition the
graph (e.g. Ethos-U) start from its result.
"""

from __future__ import annotations

import logging
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


def _describe(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    if len(text) > _MAX_CAUSE_CHARS:
        text = text[:_MAX_CAUSE_CHARS] + " ..."
    return f"{type(error).__name__}: {text}"


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
        ExportError: ``model`` is not a module, or torch.export or the
            decomposition failed (torch's reason is in the message and ``__cause__``).
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
    try:
        exported = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes, strict=False)
    except Exception as error:  # torch raises many unrelated types here
        raise ExportError(f"torch.export failed for {model_name}: {_describe(error)}") from error
    try:
        edge = exported.run_decompositions()
    except Exception as error:
        raise ExportError(
            f"decomposing {model_name} to core ATen failed: {_describe(error)}"
        ) from error
    rewrite_as_strided(edge)
    return edge
