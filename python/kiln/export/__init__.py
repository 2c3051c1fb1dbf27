"""``kiln.export``: compile a PyTorch model into a :class:`kiln.Program`.

The module itself is callable, so both spellings work::

    program = kiln.export(model, (x,))              # the whole pipeline
    program = kiln.export({"forward": (model, (x,)), "reset": (reset, ())})  # several methods
    edge = kiln.export.export_to_edge(model, (x,))  # only torch.export + core ATen

Stages (each importable on its own so a backend can plug in between):

1. :func:`export_to_edge` - torch.export + run_decompositions -> core ATen
   (skipped when given an ExportedProgram, e.g. from :func:`kiln.quantize`).
2. :func:`delegate_partitions` (with ``partitioner=``) - supported partitions become
   backend delegate calls (:mod:`kiln.export.delegate`).
3. :func:`kiln.passes.to_out_variants` - out-variant kernel calls.
4. :func:`kiln.memory.plan_memory` - offsets in planned buffers.
5. :func:`kiln.serialize.emit_program` + :class:`kiln.Program` - the ``.pte`` bytes.
"""

from __future__ import annotations

import logging
import sys
import time
import types
from collections.abc import Sequence
from typing import Any, Callable, Optional

import torch
from torch.export import ExportedProgram

from kiln import ExportError
from kiln.delegation.interfaces import Partitioner
from kiln.devtools.debug_info import DebugInfo, record_method
from kiln.export.delegate import CompileReport, DelegateInfo, Progress, delegate_partitions
from kiln.export.edge import TorchExportError, export_to_edge, normalize_core_aten, normalize_inputs
from kiln.export.methods import MethodSource, method_sources
from kiln.memory import plan_memory
from kiln.passes.kernel_availability import KERNEL_LIBRARIES
from kiln.ir.method_graph import MethodGraph
from kiln.passes.out_variants import to_out_variants
from kiln.passes.quantization_parameters import check_program_scales
from kiln.passes.value_checks import drop_value_checks
from kiln.program import Program
from kiln.serialize import emit_program

logger = logging.getLogger(__name__)

#: ``(program, delegated graph or None) -> (program, graph or None)``: see ``export(cpu_lowering=)``.
CpuLowering = Callable[[ExportedProgram, Optional[torch.fx.GraphModule]],
                       tuple[ExportedProgram, Optional[torch.fx.GraphModule]]]


def lower_edge_program(
    edge_program: ExportedProgram,
    *,
    plan_inputs: bool = True,
    plan_outputs: bool = True,
    name: str = "forward",
    graph_module: Optional[torch.fx.GraphModule] = None,
    kernel_libraries: Sequence[str] = KERNEL_LIBRARIES,
) -> MethodGraph:
    """Stages 3-4: out-variant calls and memory planning of a core-ATen program
    (or of ``graph_module``, its rewritten graph with delegate calls)."""
    method = to_out_variants(
        edge_program, method_name=name, graph_module=graph_module, kernel_libraries=kernel_libraries
    )
    plan_memory(method, plan_inputs=plan_inputs, plan_outputs=plan_outputs)
    return method


def program_from_methods(methods: list[MethodGraph]) -> Program:
    """Stage 4: emit planned methods into a :class:`kiln.Program`."""
    flatbuffer, segments = emit_program(methods)
    return Program(flatbuffer, segments)


def _is_core_aten(program: ExportedProgram) -> bool:
    """True if every operator of the graph is core ATen (or a quantize/dequantize op)."""
    for node in program.graph_module.graph.nodes:
        target = node.target
        if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            continue
        if target.namespace == "aten" and torch.Tag.core not in target.tags:
            return False
    return True


def to_edge_program(model_or_program: Any, example_inputs: Any, dynamic_shapes: Any = None) -> ExportedProgram:
    """Stage 1: a core-ATen ExportedProgram from a module or an ExportedProgram.

    Its ``as_strided`` calls become views or copies of row-major tensors and its batched
    products of one repeated matrix (a Linear on a transposed input) single matrix products
    (:func:`kiln.export.edge.normalize_core_aten`), and torch.export's checks on values
    read from tensors go with the reads that feed only them
    (:func:`kiln.passes.value_checks.drop_value_checks`); in place for an ExportedProgram
    already in core ATen: the graph computes the same. A quantization scale the program
    could not run with fails here (:func:`kiln.passes.quantization_parameters.check_program_scales`)."""
    edge = _to_core_aten(model_or_program, example_inputs, dynamic_shapes)
    drop_value_checks(edge)
    check_program_scales(edge)
    return edge


def _to_core_aten(model_or_program: Any, example_inputs: Any, dynamic_shapes: Any) -> ExportedProgram:
    if isinstance(model_or_program, ExportedProgram):
        if dynamic_shapes is not None:
            raise ExportError("dynamic_shapes apply to a module; an ExportedProgram has its own already")
        if _is_core_aten(model_or_program):
            normalize_core_aten(model_or_program)
            return model_or_program
        try:
            edge = model_or_program.run_decompositions()
        except Exception as error:  # torch raises many unrelated types here
            raise ExportError(f"decomposing the ExportedProgram to core ATen failed: {error}") from error
        normalize_core_aten(edge)
        return edge
    if example_inputs is None:
        raise ExportError("example_inputs are needed to export a torch.nn.Module")
    return export_to_edge(model_or_program, normalize_inputs(example_inputs), dynamic_shapes)


def export(
    model: Any,
    example_inputs: Optional[tuple[Any, ...]] = None,
    *,
    dynamic_shapes: Any = None,
    partitioner: Optional[Partitioner] = None,
    plan_inputs: bool = True,
    plan_outputs: bool = True,
    name: str = "forward",
    progress: Optional[Progress] = None,
    kernel_libraries: Sequence[str] = KERNEL_LIBRARIES,
    cpu_lowering: Optional[CpuLowering] = None,
) -> Program:
    """Compile ``model`` into a ``.pte`` program.

    Runs torch.export (non-strict), decomposes to core ATen, hands the parts a
    backend supports to that backend (with ``partitioner``), converts every other
    operator to its out-variant kernel call, plans memory and emits the program.

    Args:
        model: the module to compile, in eval mode, or an ExportedProgram (e.g. the
            int8 program :func:`kiln.quantize` returns; decomposed to core ATen if
            it is not already); or a dict of methods, ``{name: ExportedProgram or
            (module, example_inputs) or (module, example_inputs, dynamic_shapes)}``,
            each compiled and memory-planned on its own into one program.
        example_inputs: tuple of example inputs: tensors (their dtypes and, unless
            ``dynamic_shapes`` says otherwise, shapes are baked into the program) and
            ints, floats or bools (non-tensor method inputs; torch.export fixes each
            to its example value unless it is a dynamic int). Not needed for an
            ExportedProgram.
        dynamic_shapes: torch.export's ``dynamic_shapes``: sizes marked
            ``torch.export.Dim(name, max=N)`` may be smaller at run time; memory is
            planned for the maximum, which every dynamic size needs.
        partitioner: e.g. ``EthosUPartitioner(EthosUCompileSpec("ethos-u55-128"))``:
            its partitions become delegate calls (``DelegateCall`` instructions, blobs
            in segments); ``program.compile_report`` holds its decisions.
        plan_inputs: give inputs memory in the planned buffer (True), or leave
            them to the caller, who sets input memory at execution (False).
        plan_outputs: likewise for outputs.
        name: the method's name in the program (for a single method).
        progress: called with a short text before each delegated subgraph is compiled.
        kernel_libraries: the kernel libraries (``kernels/<library>``) the program will
            run with, most specific first. Every CPU kernel call must have a kernel
            there for its dtypes, or export fails naming the node, operator and dtype.
        cpu_lowering: runs after delegation on what stays on the CPU, e.g.
            ``kiln.backends.cortex_m.CortexMLowering()`` (int8 patterns become
            ``cortex_m::`` kernel calls); takes and returns the program and the
            delegated graph (None without a partitioner).

    Returns:
        The compiled :class:`kiln.Program` (``.save(path)``, ``.summary()``, ...).

    Raises:
        kiln.ExportError: torch.export failed, or the model has something Kiln
            cannot lower (a dynamic size without a maximum, a buffer given a new shape,
            a malformed dict of methods); :class:`kiln.UnsupportedOperatorError` names
            every node that calls an operator without a Kiln kernel, and its subclass
            :class:`kiln.UnsupportedDtypeError` every call whose dtypes no kernel takes.
    """
    methods: list[MethodGraph] = []
    reports: dict[str, CompileReport] = {}
    graphs: list[list[Any]] = []  # per method: the FX graphs its calls name (for debug info)
    for source in method_sources(model, example_inputs, dynamic_shapes, name):
        method, report, method_graphs = _compile_method(
            source, partitioner, plan_inputs, plan_outputs, progress, kernel_libraries, cpu_lowering
        )
        methods.append(method)
        graphs.append(method_graphs)
        if report is not None:
            reports[source.name] = report
    program = program_from_methods(methods)
    program.compile_report = next(iter(reports.values()), None)
    program.compile_reports = reports
    program.debug_info = DebugInfo(
        [record_method(method, method_graphs, reports.get(method.name))
         for method, method_graphs in zip(methods, graphs)]
    )  # fmt: skip
    return program


def _compile_method(
    source: MethodSource,
    partitioner: Any,
    plan_inputs: bool,
    plan_outputs: bool,
    progress: Optional[Progress],
    kernel_libraries: Sequence[str],
    cpu_lowering: Optional[CpuLowering] = None,
) -> tuple[MethodGraph, Optional[CompileReport], list[Any]]:
    """Stages 1-4 for one method: export, delegation, out variants, memory planning.
    Also returns the FX graphs the method's calls were lowered from."""
    started = time.perf_counter()
    edge_program = to_edge_program(source.model, source.example_inputs, source.dynamic_shapes)
    exported = time.perf_counter()
    graph_module, report = None, None
    if partitioner is not None:
        graph_module, report = delegate_partitions(edge_program, partitioner, progress=progress)
    if cpu_lowering is not None:
        edge_program, graph_module = cpu_lowering(edge_program, graph_module)
    method = lower_edge_program(
        edge_program, plan_inputs=plan_inputs, plan_outputs=plan_outputs, name=source.name,
        graph_module=graph_module, kernel_libraries=kernel_libraries,
    )  # fmt: skip
    logger.info(
        "exported %s as '%s': torch.export %.2f s, delegation+lowering+planning %.2f s, %d calls",
        type(source.model).__name__, source.name, exported - started, time.perf_counter() - exported,
        len(method.calls),
    )
    graphs = [edge_program.graph] + ([graph_module.graph] if graph_module is not None else [])
    return method, report, graphs


class _CallableModule(types.ModuleType):
    """Lets ``kiln.export(...)`` call :func:`export` while ``kiln.export`` stays a package."""

    def __call__(self, *args: Any, **kwargs: Any) -> Program:
        return export(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = [
    "CompileReport",
    "DelegateInfo",
    "MethodSource",
    "TorchExportError",
    "method_sources",
    "delegate_partitions",
    "export",
    "export_to_edge",
    "lower_edge_program",
    "program_from_methods",
    "to_edge_program",
]
