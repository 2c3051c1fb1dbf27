"""``to_cortex_m``: an int8 program whose quantized operators run on ``cortex_m::`` kernels.

    quantized = kiln.quantize(model, (x,), CortexMQuantizer("cortex-m55"), samples)
    lowering = CortexMLowering()
    program = kiln.export(quantized, cpu_lowering=lowering)
    print(lowering.report.line())   # how many calls run on cortex_m:: and portable kernels

With a partitioner (``--delegate``), the same lowering runs on what stays on the CPU.
"""

from __future__ import annotations

import copy
import operator
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

import torch
from torch.export import ExportedProgram
from torch.fx import GraphModule

from kiln.backends.cortex_m.graph_edit import QUANTIZE, GraphEditor, LoweringOptions
from kiln.backends.cortex_m.layout import cancel_layout_transposes
from kiln.backends.cortex_m.lowering import BOUNDARY_LOWERINGS, OPERATOR_LOWERINGS, lower_nodes
from kiln.backends.cortex_m.normalize import (
    fold_quantized_constants,
    move_quantization_across_reshapes,
    views_from_as_strided,
)
from kiln.backends.cortex_m.table_regions import lower_table_region
from kiln.passes.as_strided import reshape_objection
from kiln.passes.delegation import is_delegate_call

# Calls that reserve memory rather than compute (a kernel's scratch buffer).
_BOOKKEEPING = {torch.ops.aten.empty.memory_format}


@dataclass
class CortexMReport:
    """Where the CPU's calls run once lowered: ``cortex_m::`` kernels (and Kiln's own int8
    ``kiln::`` ones) or portable ones."""

    cortex_m: Counter = field(default_factory=Counter)  # operator -> calls
    portable: Counter = field(default_factory=Counter)
    # operator -> why its calls stay on portable kernels, where the lowering can say more
    # than "no cortex_m:: kernel" (an as_strided that is not a reshape).
    reasons: dict[str, str] = field(default_factory=dict)

    def line(self) -> str:
        cortex_m, portable = sum(self.cortex_m.values()), sum(self.portable.values())
        text = f"{cortex_m} node(s) on cortex_m:: kernels, {portable} on portable kernels"
        if self.portable:
            text += " (" + ", ".join(f"{op} x{n}" + (f": {self.reasons[op]}" if op in self.reasons else "")
                                     for op, n in self.portable.most_common()) + ")"
        return text


def _report(graph: torch.fx.Graph) -> CortexMReport:
    report = CortexMReport()
    for node in graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem or node.target in _BOOKKEEPING:
            continue
        if is_delegate_call(node):
            continue
        name = node.target.name() if isinstance(node.target, torch._ops.OpOverload) else str(node.target)
        (report.cortex_m if name.startswith(("cortex_m::", "kiln::")) else report.portable)[name] += 1
        if node.target is torch.ops.aten.as_strided.default:
            report.reasons[name] = f"{reshape_objection(node) or 'not a reshape'} (the portable as_strided_copy kernel)"
    return report


def _placeholders(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    return [node for node in graph.nodes if node.op == "placeholder"]


def _copy(value, graph_module: GraphModule):
    """A deep copy of ``value`` (a program or graph module holding ``graph_module``) whose
    placeholders keep their names: copying renames those that shadow Python builtins
    ("input" -> "input_1"), and the signature names them as before."""
    with warnings.catch_warnings():  # torch's pytree warns about its own specs being copied
        warnings.simplefilter("ignore", FutureWarning)
        copied = copy.deepcopy(value)
    copied_module = copied.graph_module if isinstance(copied, ExportedProgram) else copied
    for new, old in zip(_placeholders(copied_module.graph), _placeholders(graph_module.graph)):
        new.name = old.name
    return copied


def to_cortex_m(program: ExportedProgram, graph_module: Optional[GraphModule] = None, *,
                linear_kernel_sums: bool = True) -> tuple[ExportedProgram, GraphModule, CortexMReport]:
    """A copy of the int8 ``program`` with its quantized patterns as ``cortex_m::`` calls.

    ``graph_module`` is a rewritten copy of the program's graph (with delegate calls) to
    lower instead of the program's own (it is copied, not changed). Returns the program
    (holding the new constants), the lowered graph and where its calls run.
    ``linear_kernel_sums``: see :class:`kiln.backends.cortex_m.graph_edit.LoweringOptions`.
    """
    program = _copy(program, program.graph_module)
    graph_module = program.graph_module if graph_module is None else _copy(graph_module, graph_module)
    editor = GraphEditor(program, graph_module, LoweringOptions(linear_kernel_sums=linear_kernel_sums))
    fold_quantized_constants(editor)
    views_from_as_strided(editor)
    move_quantization_across_reshapes(editor)
    lower_nodes(editor, OPERATOR_LOWERINGS)
    editor.graph.eliminate_dead_code()
    lower_nodes(editor, {QUANTIZE: lower_table_region})
    editor.graph.eliminate_dead_code()
    lower_nodes(editor, BOUNDARY_LOWERINGS)
    editor.graph.eliminate_dead_code()
    cancel_layout_transposes(editor)
    editor.finish()
    return program, graph_module, _report(graph_module.graph)


class CortexMLowering:
    """``kiln.export(..., cpu_lowering=CortexMLowering())``: lowers each method's CPU part
    with :func:`to_cortex_m`; ``report`` (of the last method) says where its calls run."""

    def __init__(self, *, linear_kernel_sums: bool = True) -> None:
        self.report: Optional[CortexMReport] = None
        self.linear_kernel_sums = linear_kernel_sums

    def __call__(self, program: ExportedProgram, graph_module: Optional[GraphModule]
                 ) -> tuple[ExportedProgram, Optional[GraphModule]]:
        lowered, graph, self.report = to_cortex_m(program, graph_module, linear_kernel_sums=self.linear_kernel_sums)
        return lowered, (graph if graph_module is not None else None)
