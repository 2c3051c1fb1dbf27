"""A partition the backend rejects is cut in two where only int8 tensors cross, and kiln.export
tries each part again (Vela 5.2 miscompiles some large graphs for small NPUs; their parts
compile)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import kiln
import kiln.runtime
from kiln.backends.arm import EthosUCompileSpec
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.passes.delegation import constant_tensors

from .conftest import partition, quantize  # type: ignore[import-not-found]
from .models_beyond_cnns import Attention  # type: ignore[import-not-found]


class Stack(nn.Module):
    """conv, residual add, conv, linear: a few places to cut."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Conv2d(4, 4, 3, padding=1)
        self.second = nn.Conv2d(4, 8, 3, padding=1)
        self.head = nn.Linear(8 * 6 * 6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.first(x)) + x
        return self.head(torch.relu(self.second(y)).flatten(1))


def test_a_partition_cuts_in_two_where_only_int8_crosses() -> None:
    torch.manual_seed(0)
    program = quantize(Stack(), (torch.randn(1, 4, 6, 6),))
    graph_module, result = partition(program, "ethos-u55-128")
    [whole] = result.partitions
    partitioner = EthosUPartitioner(EthosUCompileSpec("ethos-u55-128"))
    pieces = partitioner.split(whole, graph_module, constant_tensors(program), result.report, "a test")
    assert [p.name for p in pieces] == [f"{whole.name}_0", f"{whole.name}_1"]
    first, second = (set(p.nodes) for p in pieces)
    assert first | second == set(whole.nodes) and not first & second
    for node in second:  # what the second part reads from the first is a quantize node's int8 output
        for source in node.all_input_nodes:
            if source in first:
                assert source.meta["val"].dtype == torch.int8, (node.name, source.name)
    assert not any(user in second for node in second for user in node.users if user in first)
    for node in first:
        assert not any(source in second for source in node.all_input_nodes)
    report = result.report
    assert [p.name for p in report.partitions] == [p.name for p in pieces]
    delegated = {d.node: d.partition for d in report.decisions if d.delegated}
    assert set(delegated.values()) == {p.name for p in pieces}
    assert report.splits and "a test" in report.splits[0] and "a test" in report.table()


@pytest.mark.slow
def test_export_runs_the_parts_of_a_subgraph_vela_miscompiles() -> None:
    """Vela 5.2 places a lookup table past the end of ethos-u55-64's SHRAM for the whole
    attention block (and says so): its parts compile, and the program runs."""
    torch.manual_seed(0)
    inputs = (torch.randn(1, 8, 32),)
    program = quantize(Attention(), inputs)
    compiled = kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec("ethos-u55-64")))
    report = compiled.compile_report.partition_report
    assert report.splits and all("shram" in split for split in report.splits), report.splits
    assert len(compiled.compile_report.delegates) >= 2
    assert all(d.delegated or d.reason.startswith("boundary:") for d in report.decisions), report.table()
    method = kiln.runtime.Runtime().load_program(compiled.to_bytes()).load_method("forward")
    (actual,) = method.execute([inputs[0].numpy()])
    expected = program.module()(*inputs).detach().numpy()
    step = float(program.graph.output_node().args[0][0].args[1])
    assert abs(actual - expected).max() <= 3 * step
