"""What :func:`kiln.export` compiles: one method, or several in one program.

``kiln.export(model, inputs)`` makes a program with one method (``forward``);
``kiln.export({"forward": ..., "reset": ...})`` one with a method per entry, each
an ExportedProgram or ``(module, example_inputs)`` or ``(module, example_inputs,
dynamic_shapes)``. Every method is lowered and memory-planned on its own; constants
(and delegate blobs) are stored once for all of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

import torch
from torch.export import ExportedProgram

from kiln import ExportError


@dataclass(frozen=True)
class MethodSource:
    """One method to compile: a module with its example inputs, or an ExportedProgram."""

    name: str
    model: Any
    example_inputs: Optional[tuple[Any, ...]] = None
    dynamic_shapes: Any = None


def method_sources(model: Any, example_inputs: Any, dynamic_shapes: Any, name: str) -> list[MethodSource]:
    """The methods ``kiln.export``'s arguments describe.

    Raises:
        ExportError: a dict together with ``example_inputs``/``dynamic_shapes``, an
            empty dict, a method name that is not a non-empty string, or an entry that
            is neither an ExportedProgram nor ``(module, inputs[, dynamic_shapes])``.
    """
    if not isinstance(model, Mapping):
        return [MethodSource(name, model, example_inputs, dynamic_shapes)]
    if example_inputs is not None or dynamic_shapes is not None:
        raise ExportError(
            "with a dict of methods, give each method its inputs in the dict: "
            "kiln.export({'forward': (model, inputs), 'reset': (other, other_inputs)})"
        )
    if not model:
        raise ExportError("the dict of methods is empty: name at least one, e.g. {'forward': (model, inputs)}")
    return [_method_source(method_name, entry) for method_name, entry in model.items()]


def _method_source(name: Any, entry: Any) -> MethodSource:
    if not isinstance(name, str) or not name:
        raise ExportError(f"method names must be non-empty strings, got {name!r}")
    if isinstance(entry, ExportedProgram):
        return MethodSource(name, entry)
    if isinstance(entry, torch.nn.Module):
        raise ExportError(
            f"method '{name}' is a module without example inputs: give ({type(entry).__name__}(...), inputs)"
        )
    if isinstance(entry, tuple) and len(entry) in (2, 3) and isinstance(entry[0], torch.nn.Module):
        return MethodSource(name, *entry)
    raise ExportError(
        f"method '{name}' is a {type(entry).__name__}; each method is an ExportedProgram or a tuple "
        "(module, example_inputs) or (module, example_inputs, dynamic_shapes)"
    )
