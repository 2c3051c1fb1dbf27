"""Every zoo model compiles for ethos-u55-128 and ethos-u85-256: what is not delegated
has a reason, the program keeps its inputs/outputs, and the delegates carry Vela's
estimates. Each model is quantized once (conftest) and compiled for both targets."""

from __future__ import annotations

import pytest
import torch

import kiln
import kiln.models
from kiln.backends.arm import EthosUCompileSpec
from kiln.backends.arm.partitioner import EthosUPartitioner

from .conftest import quantized_model  # type: ignore[import-not-found]

TARGETS = ["ethos-u55-128", "ethos-u85-256"]


@pytest.mark.slow
@pytest.mark.parametrize("name", kiln.models.names())
def test_zoo_model_compiles_for_u55_and_u85(quantized_zoo: dict, name: str) -> None:
    model, inputs, quantized = quantized_model(quantized_zoo, name)
    for target in TARGETS:
        program = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
        report = program.compile_report
        partition = report.partition_report
        assert partition.decisions and partition.target == target
        for decision in partition.rejections():
            assert decision.reason, decision
        [method] = kiln.Program.from_bytes(program.to_bytes()).methods
        assert [tuple(t.shape) for t in method.inputs] == [tuple(x.shape) for x in inputs]
        assert method.operator_counts.get("delegate:EthosUBackend", 0) == len(report.delegates)
        for info in report.delegates:
            assert info.report.npu_cycles and info.report.npu_cycles > 0
            assert info.report.flash_bytes and info.report.blob_bytes > 0
            assert info.report.target == target
