"""Partitions never make the graph cyclic once each becomes one delegate call."""

from __future__ import annotations

import pytest
import torch

from kiln import ExportError
from kiln.passes.delegation import extract_subgraph, replace_with_delegate
from kiln.ir.method_graph import LoweredDelegate

from .conftest import partition  # type: ignore[import-not-found]


def fuse(graph_module: torch.fx.GraphModule, nodes, constants, name: str) -> torch.fx.Node:
    subgraph = extract_subgraph(nodes, constants, name)
    lowered = LoweredDelegate("EthosUBackend", name.encode(), (), name)
    return replace_with_delegate(graph_module.graph, subgraph, lowered, nodes)


def test_a_path_through_the_cpu_splits_the_partition(cycle_program) -> None:
    graph_module, result = partition(cycle_program, "ethos-u55-128")
    relu = result.report.decision("relu")
    add = result.report.decision("add")
    assert relu.delegated and add.delegated, (relu.reason, add.reason)
    assert relu.partition != add.partition
    assert not result.report.decision("cumsum").delegated


def test_fused_partitions_keep_the_graph_acyclic(cycle_program) -> None:
    from kiln.passes.delegation import constant_tensors

    graph_module, result = partition(cycle_program, "ethos-u55-128")
    calls = [fuse(graph_module, p.nodes, constant_tensors(cycle_program), p.name) for p in result.partitions]
    graph_module.graph.lint()  # every node after its inputs
    order = {node: index for index, node in enumerate(graph_module.graph.nodes)}
    first, second = calls
    assert order[first] < order[second]
    assert first in ancestors(second)  # the CPU cumsum sits between them


def ancestors(node: torch.fx.Node) -> set[torch.fx.Node]:
    seen: set[torch.fx.Node] = set()
    stack = list(node.all_input_nodes)
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(current.all_input_nodes)
    return seen


def test_merging_across_the_cpu_path_would_be_a_cycle(cycle_program) -> None:
    """The check the partitioner makes is needed: one delegate for both is impossible."""
    from kiln.passes.delegation import constant_tensors

    graph_module, result = partition(cycle_program, "ethos-u55-128")
    merged = [node for p in result.partitions for node in p.nodes]
    with pytest.raises(ExportError, match="cyclic"):
        fuse(graph_module, merged, constant_tensors(cycle_program), "merged")
