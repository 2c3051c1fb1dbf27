"""``EthosUPartitioner``: which nodes of a quantized graph run on the Ethos-U NPU.

Usage (``kiln.export`` does this when given ``partitioner=``)::

    partitioner = EthosUPartitioner(EthosUCompileSpec("ethos-u55-128"))
    result = partitioner.partition(graph_module, constants)
    print(result.report.table())

The partitioner never changes the graph; :mod:`kiln.passes.delegation` cuts the
partitions out and the backend (:class:`kiln.backends.arm.backend.EthosUBackend`)
compiles them.
"""

from __future__ import annotations

import logging
import operator
from collections import Counter
from collections.abc import Mapping
from typing import Any, Optional

import torch

from kiln.backends.arm.partitioner.checks import (
    CheckContext, SupportCheck, checks_for, first_objection, group_objection,
)
from kiln.delegation.grouping import (
    NPU_DTYPES,
    NPU_INDEX_DTYPE,
    Partition,
    QuantizedGroup,
    constant_nodes,
    constants_used_only_by,
    cut_in_two,
    grow_partitions,
    is_index_operand,
    is_operator_node,
    is_quantize,
    quantize_dtype,
    quantized_groups,
    units_in_order,
)
from kiln.delegation.interfaces import PartitionResult, Partitioner
from kiln.delegation.report import PRECISION_NOTES_KEY, NodeDecision, PartitionReport, PartitionSummary
from kiln import ExportError
from kiln.passes.delegation import extract_subgraph, is_dequantize, operator_name

logger = logging.getLogger(__name__)


class EthosUPartitioner(Partitioner):
    """Chooses maximal, cycle-free groups of NPU-supported nodes of a quantized graph.

    Args:
        compile_spec: the target (:class:`kiln.backends.arm.EthosUCompileSpec`).
        nhwc_io: ask the backend for NHWC delegate inputs/outputs where they are
            the program's own inputs/outputs (no transposes at those boundaries).
        checks: replace the default support checks (``checks_for(target)``).
    """

    backend_id = "EthosUBackend"

    def __init__(
        self, compile_spec: Any, *, nhwc_io: bool = False, checks: Optional[list[SupportCheck]] = None
    ) -> None:
        self.compile_spec = compile_spec
        self.target: str = str(getattr(compile_spec, "target", compile_spec))
        self.nhwc_io = nhwc_io
        self.checks = checks if checks is not None else checks_for(self.target)

    @property
    def backend(self) -> Any:
        from kiln.backends.arm.backend import EthosUBackend

        return EthosUBackend

    def partition(self, graph_module: torch.fx.GraphModule, constants: Mapping[str, torch.Tensor]) -> PartitionResult:
        """Decides every operator node of ``graph_module``; does not modify it.

        On targets whose Vela limits Kiln knows (ethos-u55/u65 transposes), each partition is
        lowered to TOSA without Vela; a node whose lowering Vela would refuse stays on the CPU
        with the reason, and the graph is partitioned again until none is left (a node the
        check names but no group holds is left to the backend, which rejects it by trial).

        Args:
            graph_module: a core-ATen graph in PT2E quantize/dequantize form, each
                dequantize node with one user (see
                :func:`kiln.passes.delegation.duplicate_shared_dequantize`).
            constants: placeholder name -> tensor of the graph's constant inputs.
        """
        refused: dict[str, str] = {}
        while True:
            result = self._partition(graph_module, constants, refused)
            found = {node: reason for node, reason in _vela_limits(result.partitions, constants, self.compile_spec)
                     if node not in refused}
            if not found:
                result.report.precision = list(graph_module.meta.get(PRECISION_NOTES_KEY, ()))
                return result
            logger.info("%s: Vela would refuse what %d node(s) lower to: %s; partitioning again", self.target,
                        len(found), ", ".join(found))
            refused.update(found)

    def _partition(self, graph_module: torch.fx.GraphModule, constants: Mapping[str, torch.Tensor],
                   refused: Mapping[str, str]) -> PartitionResult:
        """One partitioning, with the nodes in ``refused`` (name -> reason) on the CPU."""
        graph = graph_module.graph
        constant = constant_nodes(graph, constants)
        context = CheckContext(self.target, constants, self.compile_spec, constant)
        reasons: dict[torch.fx.Node, str] = {}
        delegable = []
        for group in quantized_groups(graph, constant):
            self._decide_group(group, context, reasons, refused)
            if not group.reason:
                delegable.append(group)
        delegable = _without_loops(graph, delegable, reasons)
        selected: set[torch.fx.Node] = set()
        for group in delegable:
            selected.update(group.nodes, group.input_dequantize, group.output_quantize)
        selected |= _requantizations(graph)
        selected |= constants_used_only_by(selected, constant)
        partitions = grow_partitions(graph, selected, lambda i: f"ethosu_{i}", constant, _units(delegable))
        partitions = [p for p in partitions if self._keep(p, reasons, constants, constant)]
        report = self._report(graph, partitions, reasons)
        logger.info(
            "partitioned for %s: %d delegated, %d on CPU, %d subgraph(s)",
            self.target, report.delegated_nodes, report.cpu_nodes, len(partitions),
        )
        return PartitionResult(partitions, report)

    def split(self, partition: Partition, graph_module: torch.fx.GraphModule,
              constants: Mapping[str, torch.Tensor], report: PartitionReport, reason: str) -> list[Partition]:
        """Two smaller partitions that together hold ``partition`` (cut where only quantized
        tensors cross), recorded in ``report`` with the backend's ``reason``; [] if it cannot be cut. kiln.export asks for
        them when the backend rejects a partition (Vela 5.2 miscompiles some large graphs
        for small NPUs), so that what the backend can take of it still runs on the NPU."""
        halves = cut_in_two(partition, constant_nodes(graph_module.graph, constants))
        if halves is None:
            return []
        pieces = [Partition(f"{partition.name}_{index}", nodes) for index, nodes in enumerate(halves)]
        report.split(partition.name, [_summary(piece) for piece in pieces], reason)
        return pieces

    def _decide_group(self, group: QuantizedGroup, context: CheckContext, reasons: dict,
                      refused: Mapping[str, str]) -> None:
        if group.reason:
            for node in group.nodes:
                reasons[node] = group.reason
            return
        objections = {}
        for node in group.nodes:
            if node.target is operator.getitem:
                continue
            reason = refused.get(node.name) or first_objection(node, self.checks, context)
            if reason is not None:
                objections[node] = reason
        if not objections:
            problem = group_objection(group.nodes, context)
            if problem is not None:
                group.reason = problem
                for node in group.nodes:
                    reasons[node] = problem
            return
        # The rest of a group has no quantized value to hand over to the NPU at the node that
        # stays: the quantizer puts a quantize node at every operator's boundary except where
        # the lowering fuses operators (an activation into its producer, a lookup table).
        first = next(iter(objections))
        group.reason = (f"fused with '{first.name}' ({operator_name(first)}), which stays on the CPU "
                        f"({objections[first]}): no quantize node between them")
        for node in group.nodes:
            reasons[node] = objections.get(node, group.reason)

    def _keep(
        self, partition: Partition, reasons: dict, constants: Mapping[str, torch.Tensor], constant: frozenset
    ) -> bool:
        """A partition must compute something and exchange only int8/int16 tensors (and the
        program's int32 inputs as they are)."""
        inside = set(partition.nodes)
        problem = "" if any(_is_float_compute(n) and n not in constant for n in partition.nodes) else (
            "holds no operator to run"
        )
        for node in partition.nodes:
            for source in node.all_input_nodes:
                if source in inside or (source.op == "placeholder" and source.name in constants):
                    continue
                if _dtype(source) == NPU_INDEX_DTYPE and (is_index_operand(node, source) or source.op == "placeholder"):
                    continue  # int32 indices or side inputs (lengths) cross as they are
                if _dtype(source) not in NPU_DTYPES:
                    problem = problem or f"would take '{source.name}' as {_dtype(source)}, not int8/int16"
            if any(u not in inside for u in node.users) and _dtype(node) not in NPU_DTYPES:
                problem = problem or f"would return '{node.name}' as {_dtype(node)}, not int8/int16"
        if problem:
            logger.warning("dropping subgraph %s: it %s", partition.name, problem)
            for node in partition.nodes:
                if _is_float_compute(node):
                    reasons[node] = f"subgraph {partition.name} {problem}"
            return False
        return True

    def _report(self, graph: torch.fx.Graph, partitions: list[Partition], reasons: dict) -> PartitionReport:
        report = PartitionReport(self.target)
        partition_of = {node: p.name for p in partitions for node in p.nodes}
        for node in graph.nodes:
            if not is_operator_node(node):
                continue
            name = partition_of.get(node, "")
            if name:
                decision = NodeDecision(node.name, operator_name(node), self.target, True, "", name)
            else:
                reason = reasons.get(node) or _cpu_reason(node, partition_of)
                decision = NodeDecision(node.name, operator_name(node), self.target, False, reason)
            report.decisions.append(decision)
        report.partitions.extend(_summary(partition) for partition in partitions)
        return report


def _vela_limits(partitions: list[Partition], constants: Mapping[str, torch.Tensor],
                 compile_spec: Any) -> list[tuple[str, str]]:
    """(node, reason) for each node whose TOSA Vela would refuse for the target
    (kiln.backends.arm.tosa.vela_limits), found by lowering every partition without
    running Vela. A partition the lowering cannot take at all is the backend's to reject."""
    from kiln.backends.arm.tosa import TosaLoweringError
    from kiln.backends.arm.tosa.lowering import vela_limits
    from kiln.backends.arm.tosa.vela_limits import has_limits

    if not has_limits(compile_spec):
        return []
    found: list[tuple[str, str]] = []
    for partition in partitions:
        subgraph = extract_subgraph(partition.nodes, constants, partition.name)
        try:
            errors = vela_limits(subgraph.graph_module, compile_spec, name=partition.name)
        except (TosaLoweringError, ExportError) as error:
            logger.debug("%s: not checked against Vela's limits: %s", partition.name, error)
            continue
        found.extend((error.node, f"Vela would refuse it: {error.reason}") for error in errors)
    return found


def _requantizations(graph: torch.fx.Graph) -> set[torch.fx.Node]:
    """Quantize nodes that read a dequantize node (no operator between them: an in-place
    dropout or another identity decomposed away) and that dequantize: a RESCALE, or nothing,
    on the NPU; left out, the pair would cut the delegate around it in two."""
    found: set[torch.fx.Node] = set()
    for node in graph.nodes:
        source = node.args[0] if is_quantize(node) and node.args else None
        if isinstance(source, torch.fx.Node) and is_dequantize(source) and len(source.users) == 1 \
                and quantize_dtype(source) in NPU_DTYPES and quantize_dtype(node) in NPU_DTYPES:
            found.update((node, source))
    return found


def _units(groups: list[QuantizedGroup]) -> dict[torch.fx.Node, int]:
    """Node -> its group's index, for the nodes that must share a delegate: a group's float
    operators and the quantize nodes of its results (float values flow between them)."""
    return {node: index for index, group in enumerate(groups) for node in (*group.nodes, *group.output_quantize)}


def _without_loops(graph: torch.fx.Graph, groups: list[QuantizedGroup], reasons: dict) -> list[QuantizedGroup]:
    """``groups`` less those that read their own result through a node outside them: no
    delegate can hold one whole (it would wait for its own output)."""
    while True:
        _, looping = units_in_order(graph, _units(groups))
        if not looping:
            return groups
        for index in looping:
            group = groups[index]
            group.reason = "its result returns to it through other operators: one delegate would wait for itself"
            for node in group.nodes:
                reasons[node] = group.reason
        groups = [group for index, group in enumerate(groups) if index not in set(looping)]


def _summary(partition: Partition) -> PartitionSummary:
    inside = set(partition.nodes)
    inputs = {s.name: None for n in partition.nodes for s in n.all_input_nodes if s not in inside}
    outputs = [n.name for n in partition.nodes if any(u not in inside for u in n.users)]
    counts = Counter(operator_name(n) for n in partition.nodes if is_operator_node(n))
    return PartitionSummary(partition.name, [n.name for n in partition.nodes], dict(counts), list(inputs), outputs)


def _is_float_compute(node: torch.fx.Node) -> bool:
    return is_operator_node(node) and not is_quantize(node) and not is_dequantize(node)


def _dtype(node: torch.fx.Node) -> Optional[torch.dtype]:
    value = node.meta.get("val")
    return value.dtype if isinstance(value, torch.Tensor) else None


def _cpu_reason(node: torch.fx.Node, partition_of: Mapping[torch.fx.Node, str]) -> str:
    """Why a quantize/dequantize or constant node stays on the CPU."""
    if is_quantize(node):
        if any(u in partition_of for u in node.users):
            return "boundary: quantizes a float tensor for a delegate (int8 input)"
        return "quantizes for a CPU operator"
    if is_dequantize(node):
        source = node.all_input_nodes[0] if node.all_input_nodes else None
        if source is not None and source in partition_of:
            return "boundary: dequantizes a delegate's int8 output"
        return "dequantizes for a CPU operator"
    return "no delegated operator uses it"
