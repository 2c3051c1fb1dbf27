"""What the Ethos-U partitioner delegates, what it leaves on the CPU, and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from kiln.passes.delegation import operator_name

from .conftest import partition  # type: ignore[import-not-found]

TARGETS = ["ethos-u55-128", "ethos-u85-256"]


def decisions_for(result, operator: str):
    return [d for d in result.report.decisions if d.operator == operator]


@pytest.mark.parametrize("target", TARGETS)
def test_operator_no_check_knows_stays_on_cpu_with_its_reason(unknown_operator_program, target: str) -> None:
    _, result = partition(unknown_operator_program, target)
    [unknown] = decisions_for(result, "aten::cumsum")
    assert not unknown.delegated
    assert "no Ethos-U support check knows aten::cumsum" in unknown.reason
    assert unknown.target == target
    relus = decisions_for(result, "aten::relu")
    assert len(relus) == 2 and all(d.delegated for d in relus), [d.reason for d in relus]
    # The relus on either side of the CPU operator cannot share a delegate.
    assert len(result.partitions) == 2


def test_u55_rejects_a_stride_4_depthwise_convolution_that_u85_runs(strided_conv_program) -> None:
    _, u55 = partition(strided_conv_program, "ethos-u55-128")
    _, u85 = partition(strided_conv_program, "ethos-u85-256")
    [conv55] = decisions_for(u55, "aten::convolution")
    [conv85] = decisions_for(u85, "aten::convolution")
    assert not conv55.delegated
    assert "depthwise convolution stride [4, 4]: ethos-u55 supports stride 1-3" in conv55.reason
    assert conv85.delegated, conv85.reason
    # The relu fused with the convolution follows it to the CPU on U55, with a reason.
    [relu55] = decisions_for(u55, "aten::relu")
    assert not relu55.delegated and relu55.reason


@pytest.mark.parametrize("target", TARGETS)
def test_partitions_exchange_only_int8_and_boundary_qdq_stay_on_cpu(strided_conv_program, target: str) -> None:
    graph_module, result = partition(strided_conv_program, target)
    names = {n.name: n for n in graph_module.graph.nodes}
    constants = {n for n in graph_module.graph.nodes if n.op == "placeholder" and n.name.startswith("b_")}
    for part in result.partitions:
        inside = set(part.nodes)
        for node in part.nodes:
            for source in node.all_input_nodes:
                if source not in inside and source not in constants:
                    assert source.meta["val"].dtype == torch.int8, f"{part.name} takes {source.name}"
                    assert operator_name(source) == "quantized_decomposed::quantize_per_tensor"
            if any(user not in inside for user in node.users):
                assert node.meta["val"].dtype == torch.int8, f"{part.name} returns {node.name}"
    for decision in result.report.rejections():
        if decision.reason.startswith("boundary"):
            assert names[decision.node].op == "call_function"


@pytest.mark.parametrize("target", TARGETS)
def test_every_node_left_on_cpu_has_a_reason(unknown_operator_program, strided_conv_program, target: str) -> None:
    for program in (unknown_operator_program, strided_conv_program):
        _, result = partition(program, target)
        assert result.report.decisions
        for decision in result.report.rejections():
            assert decision.reason, decision


def test_report_is_a_table_and_two_files(unknown_operator_program, tmp_path: Path) -> None:
    _, result = partition(unknown_operator_program, "ethos-u55-128")
    report = result.report
    table = report.table()
    assert "aten::cumsum" in table and "no Ethos-U support check knows" in table
    text, data = report.save(tmp_path)
    assert text.read_text().strip() == table
    loaded = json.loads(data.read_text())
    assert sum(row["count"] for row in loaded["rows"]) == len(report.decisions)
    assert loaded["delegated_nodes"] + loaded["cpu_nodes"] == len(report.decisions)
    assert [p["name"] for p in loaded["partitions"]] == [p.name for p in result.partitions]
