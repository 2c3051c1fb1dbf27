"""A program with Ethos-U delegates: DelegateCall arguments, BackendDelegate entries,
blob segments and compile specs as ExecuTorch writes them; ExecuTorch's own
deserializer reads the file back the same way."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import torch

import kiln
from kiln.backends.arm import EthosUCompileSpec
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.serialize import SEGMENT_ALIGNMENT, ExtendedHeader, read_pte
from kiln.serialize import program_generated as pte
from kiln.serialize.scalar_types import scalar_type_code

TARGET = "ethos-u55-128"
ET_READER = Path(__file__).with_name("executorch_read_delegates.py")


@pytest.fixture(scope="module")
def delegated(cycle_program):
    """Two delegates (relu, then add) with a CPU cumsum between them."""
    spec = EthosUCompileSpec(TARGET)
    program = kiln.export(cycle_program, partitioner=EthosUPartitioner(spec))
    return spec, program, program.to_bytes()


def instructions(plan: pte.ExecutionPlanT) -> list[pte.InstructionT]:
    return [i for chain in plan.chains for i in chain.instructions]


def test_each_delegate_call_takes_int8_inputs_then_outputs(delegated) -> None:
    _, program, data = delegated
    flat, _ = read_pte(data)
    plan = flat.executionPlan[0]
    calls = [i.instrArgs for i in instructions(plan) if i.instrArgsType == pte.InstructionArguments.DelegateCall]
    report = program.compile_report
    assert len(calls) == len(report.delegates) == 2
    for call, info in zip(calls, report.delegates):
        tosa = info.preprocessed.tosa
        expected = [*tosa.inputs, *tosa.outputs]
        assert len(call.args) == len(expected)
        for index, io in zip(call.args, expected):
            value = plan.values[index]
            assert value.valType == pte.KernelTypes.Tensor
            assert value.val.scalarType == scalar_type_code(torch.int8)
            assert tuple(value.val.sizes) == io.shape
            assert value.val.allocationInfo is not None  # planned like any activation
    # The CPU reads the first delegate's output: its tensor is an argument of a later kernel call.
    first_output = calls[0].args[-1]
    later = [i.instrArgs for i in instructions(plan)[1:] if i.instrArgsType == pte.InstructionArguments.KernelCall]
    assert any(first_output in call.args for call in later)


def test_backend_delegates_keep_blobs_in_aligned_segments_with_compile_specs(delegated) -> None:
    spec, program, data = delegated
    flat, segments = read_pte(data)
    header = ExtendedHeader.parse(data)
    plan = flat.executionPlan[0]
    assert len(plan.delegates) == 2
    for delegate, info in zip(plan.delegates, program.compile_report.delegates):
        assert delegate.id == b"EthosUBackend"
        assert delegate.processed.location == pte.DataLocation.SEGMENT
        index = delegate.processed.index
        assert index >= 1  # segment 0 holds the constants
        assert segments[index] == info.preprocessed.blob
        start = header.segment_base_offset + flat.segments[index].offset
        assert start % SEGMENT_ALIGNMENT == 0
        specs = [(s.key.decode(), bytes(bytearray(s.value))) for s in delegate.compileSpecs]
        # ExecuTorch's Ethos-U compile specs, then Kiln's note on the IO layout for its runtime.
        assert specs == [*spec.to_compile_specs(), ("io_layout", b"nhwc")]
    assert not flat.backendDelegateData  # nothing inline


@pytest.mark.executorch
def test_executorch_deserializer_reads_the_delegates(delegated, executorch_python: Path, tmp_path: Path) -> None:
    _, program, data = delegated
    path = tmp_path / "delegated.pte"
    path.write_bytes(data)
    result = subprocess.run([str(executorch_python), str(ET_READER), str(path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    flat, _ = read_pte(data)
    plan = flat.executionPlan[0]
    ours = [list(i.instrArgs.args) for i in instructions(plan)
            if i.instrArgsType == pte.InstructionArguments.DelegateCall]
    assert seen["delegate_call_args"] == ours
    assert seen["ids"] == ["EthosUBackend", "EthosUBackend"]
    assert seen["blob_sizes"] == [len(info.preprocessed.blob) for info in program.compile_report.delegates]
    assert seen["compile_spec_keys"][0] == [key for key, _ in program.compile_report.delegates[0].preprocessed.compile_specs]


def test_nhwc_io_makes_program_io_channels_last_and_removes_transposes(strided_conv_program) -> None:
    spec = EthosUCompileSpec("ethos-u85-256")
    shapes = {}
    for nhwc in (False, True):
        program = kiln.export(strided_conv_program, partitioner=EthosUPartitioner(spec, nhwc_io=nhwc))
        [info] = program.compile_report.delegates
        [method] = program.methods
        shapes[nhwc] = ([t.shape for t in method.inputs], [t.shape for t in method.outputs],
                        info.report.transpose_bytes, info.nhwc_io)
    (n, c, h, w), (on, oc, oh, ow) = shapes[False][0][0], shapes[False][1][0]
    assert shapes[True][0] == [(n, h, w, c)] and shapes[True][1] == [(on, oh, ow, oc)]
    assert shapes[False][2] > 0 and shapes[True][2] == 0
    assert shapes[True][3] and not shapes[False][3]
