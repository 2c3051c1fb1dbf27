"""``kiln.export``: compile a PyTorch model into a :class:`kiln.Program`.

The module itself is callable, so both spellings work::

    program = kiln.export(model, (x,))              # the whole pipeline
    edge = kiln.export.export_to_edge(model, (x,))  # only torch.export + core ATen

Stages (each importable on its own so a backend can plug in between):

1. :func:`export_to_edge` - torch.export + run_decompositions -> core ATen.
2. :func:`kiln.passes.to_out_variants` - out-variant kernel calls.
3. :func:`kiln.memory.plan_memory` - offsets in planned buffers.
4. :func:`kiln.serialize.emit_program` + :class:`kiln.Program` - the ``.pte`` bytes.
"""

from __future__ import annotations

import logging
import sys
import time
import types
from typing import Any

import torch
from torch.export import ExportedProgram

from kiln.export.edge import export_to_edge, normalize_inputs
from kiln.memory import plan_memory
from kiln.passes.method_graph import MethodGraph
from kiln.passes.out_variants import to_out_variants
from kiln.program import Program
from kiln.serialize import emit_program

logger = logging.getLogger(__name__)


def lower_edge_program(
    edge_program: ExportedProgram,
    *,
    plan_inputs: bool = True,
    plan_outputs: bool = True,
    name: str = "forward",
) -> MethodGraph:
    """Stages 2-3: out-variant calls and memory planning of a core-ATen program."""
    method = to_out_variants(edge_program, method_name=name)
    plan_memory(method, plan_inputs=plan_inputs, plan_outputs=plan_outputs)
    return method


def program_from_methods(methods: list[MethodGraph]) -> Program:
    """Stage 4: emit planned methods into a :class:`kiln.Program`."""
    flatbuffer, segments = emit_program(methods)
    return Program(flatbuffer, segments)


def export(
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    *,
    plan_inputs: bool = True,
    plan_outputs: bool = True,
    name: str = "forward",
) -> Program:
    """Compile ``model`` into a ``.pte`` program.

    Runs torch.export (non-strict), decomposes to core ATen, converts every
    operator to its out-variant kernel call, plans memory and emits the program.

    Args:
        model: the module to compile, in eval mode.
        example_inputs: tuple of example tensors; their shapes and dtypes are
            baked into the program (static shapes).
        plan_inputs: give inputs memory in the planned buffer (True), or leave
            them to the caller, who sets input memory at execution (False).
        plan_outputs: likewise for outputs.
        name: the method's name in the program.

    Returns:
        The compiled :class:`kiln.Program` (``.save(path)``, ``.summary()``, ...).

    Raises:
        kiln.ExportError: torch.export failed, or the model has something Kiln
            cannot lower; :class:`kiln.UnsupportedOperatorError` names every node
            that calls an operator without a Kiln kernel.
    """
    started = time.perf_counter()
    edge_program = export_to_edge(model, normalize_inputs(example_inputs))
    exported = time.perf_counter()
    method = lower_edge_program(
        edge_program, plan_inputs=plan_inputs, plan_outputs=plan_outputs, name=name
    )
    program = program_from_methods([method])
    logger.info(
        "exported %s: torch.export %.2f s, lowering+planning+emit %.2f s, %d kernel calls",
        type(model).__name__, exported - started, time.perf_counter() - exported, len(method.calls),
    )
    return program


class _CallableModule(types.ModuleType):
    """Lets ``kiln.export(...)`` call :func:`export` while ``kiln.export`` stays a package."""

    def __call__(self, *args: Any, **kwargs: Any) -> Program:
        return export(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["export", "export_to_edge", "lower_edge_program", "program_from_methods"]
