"""``XnnpackPartitioner``: which nodes of a float or int8 graph run in XNNPACK delegates.

    program = kiln.export(model, (x,), partitioner=XnnpackPartitioner())
    print(program.compile_report.partition_report.table())

Every supported node (:mod:`kiln.backends.xnnpack.support`) is selected, with the
quantize/dequantize nodes next to them (int8 graphs) and the constant nodes only
they read (weights); :func:`kiln.delegation.grouping.grow_partitions`
groups them into connected, cycle-free partitions. A partition that computes nothing
but conversions or reshapes is left on the CPU. Delegate inputs and outputs of
rank 4 are channels-last (``channels_last_io``): ``kiln.export`` permutes them on
the CPU, because the Debian XNNPACK has no transpose node.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from typing import Any

import torch

from kiln.delegation.grouping import Partition, constant_nodes, constants_used_only_by, grow_partitions, is_operator_node
from kiln.delegation.interfaces import PartitionResult, Partitioner
from kiln.delegation.report import NodeDecision, PartitionReport, PartitionSummary
from kiln.backends.xnnpack.lowering import ALIASES, AS_STRIDED, RESHAPES
from kiln.backends.xnnpack.operands import DEQUANTIZE_PER_TENSOR, QUANTIZE_PER_TENSOR, operator_base_name
from kiln.backends.xnnpack.support import objection
from kiln.passes.delegation import operator_name

logger = logging.getLogger(__name__)

TARGET = "xnnpack"
# Nodes that do not make a partition worth a delegate call on their own.
_NO_WORK = {QUANTIZE_PER_TENSOR, DEQUANTIZE_PER_TENSOR, *ALIASES, *RESHAPES, AS_STRIDED}


class XnnpackPartitioner(Partitioner):
    """Chooses maximal, cycle-free groups of XNNPACK-supported nodes (fp32 and int8)."""

    backend_id = "XnnpackBackend"
    channels_last_io = True

    @property
    def backend(self) -> Any:
        from kiln.backends.xnnpack.backend import XnnpackBackend

        return XnnpackBackend

    def partition(self, graph_module: torch.fx.GraphModule, constants: Mapping[str, torch.Tensor]) -> PartitionResult:
        """Decides every operator node of ``graph_module``; does not modify it."""
        graph = graph_module.graph
        constant = constant_nodes(graph, constants)
        reasons: dict[torch.fx.Node, str] = {}
        selected: set[torch.fx.Node] = set()
        for node in graph.nodes:
            if node.op != "call_function" or node in constant:
                continue
            reason = objection(node, constant)
            if reason is None:
                selected.add(node)
            else:
                reasons[node] = reason
        selected |= constants_used_only_by(selected, constant)
        partitions = grow_partitions(graph, selected, lambda i: f"xnnpack_{i}", constant)
        partitions = [p for p in partitions if _does_work(p, reasons, constant)]
        report = _report(graph, partitions, reasons)
        logger.info("partitioned for XNNPACK: %d delegated, %d on CPU, %d subgraph(s)",
                    report.delegated_nodes, report.cpu_nodes, len(partitions))
        return PartitionResult(partitions, report)


def _does_work(partition: Partition, reasons: dict[torch.fx.Node, str], constant: frozenset) -> bool:
    if any(is_operator_node(n) and n not in constant and operator_base_name(n) not in _NO_WORK for n in partition.nodes):
        return True
    for node in partition.nodes:
        reasons[node] = "only conversions or reshapes around it run in XNNPACK: not worth a delegate call"
    return False


def _report(graph: torch.fx.Graph, partitions: list[Partition], reasons: dict[torch.fx.Node, str]) -> PartitionReport:
    report = PartitionReport(TARGET)
    partition_of = {node: p.name for p in partitions for node in p.nodes}
    for node in graph.nodes:
        if not is_operator_node(node):
            continue
        name = partition_of.get(node, "")
        reason = "" if name else reasons.get(node) or _cpu_reason(node)
        report.decisions.append(NodeDecision(node.name, operator_name(node), TARGET, bool(name), reason, name))
    for partition in partitions:
        inside = set(partition.nodes)
        inputs = {s.name: None for n in partition.nodes for s in n.all_input_nodes if s not in inside}
        outputs = [n.name for n in partition.nodes if any(u not in inside for u in n.users)]
        counts = Counter(operator_name(n) for n in partition.nodes if is_operator_node(n))
        report.partitions.append(PartitionSummary(partition.name, [n.name for n in partition.nodes], dict(counts),
                                                  list(inputs), outputs))
    return report


def _cpu_reason(node: torch.fx.Node) -> str:
    return "no delegated operator uses it"


__all__ = ["XnnpackPartitioner", "PartitionResult", "TARGET"]
