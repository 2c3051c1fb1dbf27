"""Delegation stage of :func:`kiln.export`: partition, preprocess, replace by delegate calls.

A partitioner is a :class:`kiln.delegation.Partitioner` (e.g.
:class:`kiln.backends.arm.partitioner.EthosUPartitioner`): ``partition`` chooses the nodes,
its ``backend`` preprocesses each partition with the partitioner's ``compile_spec``. A
subgraph the backend rejects (a :class:`kiln.KilnError`) is cut in two by the partitioner's
``split`` and each part tried again; what cannot be cut stays on the CPU with the backend's
reason in the report. A partitioner with ``channels_last_io = True`` (XNNPACK) gets NHWC 4-D
delegate inputs and outputs, with CPU permutes around each delegate call (:func:`permute_rank4_io`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import torch
from torch.export import ExportedProgram

from kiln import KilnError
from kiln.delegation.interfaces import Partitioner, PreprocessResult
from kiln.delegation.report import PartitionReport
from kiln.passes.delegation import (
    Subgraph,
    constant_tensors,
    copy_graph_module,
    duplicate_shared_dequantize,
    extract_subgraph,
    is_dequantize,
    replace_with_delegate,
)
from kiln.ir.method_graph import LoweredDelegate

logger = logging.getLogger(__name__)


@dataclass
class DelegateInfo:
    """One delegate of the program as compiled: its report and what produced it."""

    name: str
    report: Any  # backend report, e.g. kiln.backends.arm.backend.DelegateReport
    preprocessed: PreprocessResult  # e.g. Ethos-U's: blob, TOSA, Vela result
    input_nodes: list[str]  # FX nodes of the quantized graph that feed it (int8)
    output_nodes: list[str]  # FX nodes of the quantized graph it replaces as outputs
    nhwc_io: bool = False  # its 4-D inputs/outputs (and the program's) are channels-last


@dataclass
class CompileReport:
    """What delegation decided and produced for one method."""

    partition_report: PartitionReport
    delegates: list[DelegateInfo] = field(default_factory=list)
    # The quantized graph with delegate call nodes, and the constants it reads
    # (for evaluating the delegated program with a reference model).
    graph_module: Optional[torch.fx.GraphModule] = None
    seconds: dict[str, float] = field(default_factory=dict)


Progress = Callable[[str], None]


def delegate_partitions(
    edge_program: ExportedProgram, partitioner: Partitioner, *, progress: Optional[Progress] = None
) -> tuple[torch.fx.GraphModule, CompileReport]:
    """Partitions ``edge_program`` and replaces each accepted partition by a delegate call.

    Returns a rewritten copy of the program's graph (``edge_program`` is not
    changed) for :func:`kiln.passes.to_out_variants`, and the :class:`CompileReport`.
    """
    started = time.perf_counter()
    graph_module = copy_graph_module(edge_program)
    duplicate_shared_dequantize(graph_module.graph)
    constants = constant_tensors(edge_program)
    result = partitioner.partition(graph_module, constants)
    report = CompileReport(result.report, graph_module=graph_module)
    report.seconds["partition"] = time.perf_counter() - started
    want_nhwc = partitioner.nhwc_io
    pending = list(result.partitions)
    index = 0
    while pending:
        partition = pending.pop(0)
        index += 1
        if progress is not None:
            progress(f"{partition.name} ({index}/{index + len(pending)}, {len(partition.nodes)} nodes)")
        subgraph = extract_subgraph(partition.nodes, constants, partition.name)
        nhwc_io = want_nhwc and _is_program_boundary(subgraph, set(partition.nodes))
        if want_nhwc and not nhwc_io:
            logger.warning("%s: keeps NCHW inputs/outputs: a 4-D one is not a program input/output", partition.name)
        try:
            preprocessed = partitioner.backend.preprocess(
                subgraph.graph_module, partitioner.compile_spec, name=partition.name, nhwc_io=nhwc_io
            )
        except KilnError as error:
            # What the backend can take of a rejected partition may still run there.
            pieces = partitioner.split(partition, graph_module, constants, result.report, str(error))
            if pieces:
                logger.warning("subgraph %s rejected (%s); trying it in %d parts", partition.name, error, len(pieces))
                pending[:0] = pieces
                continue
            reason = f"fell back to the CPU: {error}"
            logger.warning("subgraph %s %s", partition.name, reason)
            result.report.fall_back(partition.name, reason)
            continue
        lowered = LoweredDelegate(
            backend_id=partitioner.backend.id,
            processed=preprocessed.blob,
            compile_specs=tuple(preprocessed.compile_specs),
            name=partition.name,
        )
        input_names = [n.name for n in subgraph.inputs]
        output_names = [n.name for n in subgraph.outputs]
        call = replace_with_delegate(graph_module.graph, subgraph, lowered, partition.nodes)
        if nhwc_io:
            _make_channels_last(call)
        elif partitioner.channels_last_io:
            permute_rank4_io(call)
        report.delegates.append(
            DelegateInfo(partition.name, preprocessed.report, preprocessed, input_names, output_names, nhwc_io)
        )
    report.seconds["delegate"] = time.perf_counter() - started
    return graph_module, report


def _is_rank4(node: torch.fx.Node) -> bool:
    value = node.meta.get("val")
    return isinstance(value, torch.Tensor) and value.dim() == 4


def _is_program_boundary(subgraph: Subgraph, members: set[torch.fx.Node]) -> bool:
    """True if every 4-D delegate input is a quantized program input and every 4-D
    output is only dequantized into a program output (nothing else sees them)."""
    for node in subgraph.inputs:
        if not _is_rank4(node):
            continue
        source = node.all_input_nodes[0] if node.op == "call_function" and node.all_input_nodes else None
        if source is None or source.op != "placeholder" or len(source.users) != 1:
            return False
        if any(user not in members for user in node.users):
            return False
    for node in subgraph.outputs:
        if not _is_rank4(node):
            continue
        for user in node.users:
            if user in members:
                continue
            if not is_dequantize(user) or [u.op for u in user.users] != ["output"]:
                return False
    return True


_NCHW_TO_NHWC = [0, 2, 3, 1]
_NHWC_TO_NCHW = [0, 3, 1, 2]


def _permuted(graph: torch.fx.Graph, source: torch.fx.Node, dims: list[int]) -> torch.fx.Node:
    permute = graph.call_function(torch.ops.aten.permute.default, (source, dims))
    permute.meta["val"] = source.meta["val"].permute(dims).contiguous()
    return permute


def permute_rank4_io(call: torch.fx.Node) -> None:
    """Gives a delegate that works channels-last NHWC 4-D inputs and outputs: CPU permutes
    (NCHW -> NHWC before it, NHWC -> NCHW after it) keep the rest of the program NCHW."""
    graph = call.graph
    for source in list(call.all_input_nodes):
        if _is_rank4(source):
            with graph.inserting_before(call):
                call.replace_input_with(source, _permuted(graph, source, _NCHW_TO_NHWC))
    values = list(call.meta["val"])
    for selected in list(call.users):
        if not _is_rank4(selected):
            continue
        nchw = selected.meta["val"]
        selected.meta["val"] = nchw.permute(_NCHW_TO_NHWC).contiguous()
        values[selected.args[1]] = selected.meta["val"]
        users = list(selected.users)
        with graph.inserting_after(selected):
            restored = _permuted(graph, selected, _NHWC_TO_NCHW)
        for user in users:
            user.replace_input_with(selected, restored)
    call.meta["val"] = tuple(values)


def _channels_last(node: torch.fx.Node) -> None:
    value = node.meta["val"]
    n, c, h, w = value.shape
    node.meta["val"] = torch.empty((n, h, w, c), dtype=value.dtype, device="meta")


def _make_channels_last(call: torch.fx.Node) -> None:
    """Gives the delegate's 4-D inputs/outputs and the program inputs/outputs next to
    them NHWC shapes (the quantize/dequantize between them are element-wise)."""
    for node in call.all_input_nodes:
        if _is_rank4(node):
            _channels_last(node)
            _channels_last(node.all_input_nodes[0])
    values = list(call.meta["val"])
    for selected in call.users:
        if not _is_rank4(selected):
            continue
        _channels_last(selected)
        values[selected.args[1]] = selected.meta["val"]
        for user in selected.users:
            _channels_last(user)
    call.meta["val"] = tuple(values)


__all__ = ["CompileReport", "DelegateInfo", "constant_tensors", "delegate_partitions"]
