"""Every zoo model compiles for ethos-u55-128, ethos-u65-256 and ethos-u85-256: what is not
delegated has a reason, the program keeps its inputs/outputs, and the delegates carry Vela's
estimates. Each model is quantized once (conftest) and exported for U55 and U85; U65 takes
the same TOSA subgraphs as U55 (the partitioner's rules are the same for both), so Vela
compiles the U55 program's lowered TOSA flatbuffers for ethos-u65-256 instead of a third
export."""

from __future__ import annotations

import pytest
import torch

import kiln
import kiln.models
from kiln.backends.arm import EthosUCompileSpec
from kiln.backends.arm.vela import compile_tosa
from kiln.backends.arm.vnpu import target_from_command_stream

from .conftest import delegated_program, quantized_model  # type: ignore[import-not-found]

TARGETS = ["ethos-u55-128", "ethos-u85-256"]
U65 = "ethos-u65-256"


@pytest.mark.slow
@pytest.mark.parametrize("name", kiln.models.names())
def test_zoo_model_compiles_for_u55_u65_and_u85(quantized_zoo: dict, name: str) -> None:
    model, inputs, quantized = quantized_model(quantized_zoo, name)
    for target in TARGETS:
        program = delegated_program(quantized_zoo, name, target)
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
        if target == "ethos-u55-128":
            u65 = EthosUCompileSpec(U65)
            for info in report.delegates:
                vela = compile_tosa(info.preprocessed.tosa.flatbuffer, u65, name=info.name)
                assert vela.target == U65
                assert target_from_command_stream(vela.command_stream) == ("ethos-u65", 256), info.name
                assert vela.npu_cycles and vela.npu_cycles > 0, info.name
                assert len(vela.inputs) == len(info.preprocessed.tosa.inputs), info.name
                assert len(vela.outputs) == len(info.preprocessed.tosa.outputs), info.name
