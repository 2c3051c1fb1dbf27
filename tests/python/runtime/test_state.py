"""State: buffers a model updates in place are kept between calls, start from the
initial values stored in the program, and are reset by loading the method again."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import kiln
from kiln.ir.method_graph import TensorRole, TensorValue
from kiln.passes.state import write_back
from kiln.runtime import KilnRuntimeError, Module, Runtime
from kiln.serialize import program_generated as pte

from .conftest import (  # type: ignore[import-not-found]
    STALE_BYTES,
    AccumulatingDoubler,
    Call,
    Delay,
    RunningMean,
    accumulating_doubler_calls,
    assert_close,
    eager_calls,
    make_gru_step,
    run_in_stale_memory,
)

FRAMES = [torch.randn(1, 5, generator=torch.Generator().manual_seed(k)) for k in range(6)]


@pytest.fixture(scope="module")
def gru() -> tuple[torch.nn.Module, torch.nn.GRUCell, kiln.Program]:
    """The streaming GRU (hidden state starting from non-zero values), its cell and its program."""
    model, cell = make_gru_step()
    model.hidden.copy_(torch.linspace(-0.5, 0.5, 8).unsqueeze(0))
    return model, cell, kiln.export(copy.deepcopy(model), (FRAMES[0],))


def test_streaming_gru_matches_the_cell_frame_after_frame(gru) -> None:
    model, cell, program = gru
    module = Module(program.to_bytes())
    hidden = model.hidden.clone()
    for k, frame in enumerate(FRAMES):
        with torch.no_grad():
            hidden = cell(frame, hidden)
        (got,) = module.forward(frame)
        assert_close(got, hidden, f"frame {k}")


def test_loading_the_method_again_restores_the_initial_state(gru) -> None:
    _, _, program = gru
    module = Module(program.to_bytes())
    first = [module.forward(frame)[0] for frame in FRAMES[:3]]
    module.reset()
    again = [module.forward(frame)[0] for frame in FRAMES[:3]]
    for k, (a, b) in enumerate(zip(first, again)):
        assert torch.equal(a, b), f"frame {k} after reset"
    # The lower-level API: a method loaded anew starts from the initial values too.
    fresh = Runtime.get().load_program(program.to_bytes()).load_method("forward")
    assert torch.equal(fresh.execute([FRAMES[0]])[0], first[0])
    assert not torch.equal(module.forward(FRAMES[0])[0], first[0])  # the module's state moved on


def test_float_and_int_buffers_with_initial_values() -> None:
    model = RunningMean()
    program = kiln.export(copy.deepcopy(model), (torch.ones(4),))
    assert program.methods[0].state_bytes == 4 * 4 + 8
    assert "state (mutable buffers, kept between calls): 24 bytes" in program.summary()
    frames = [torch.randn(4, generator=torch.Generator().manual_seed(k)) for k in range(4)]
    calls = [Call("forward", (frame,)) for frame in frames]
    module = Module(program.to_bytes())
    for k, (call, want) in enumerate(zip(calls, eager_calls({"forward": model}, calls))):
        assert_close(module.run(call.method, *call.inputs)[0], want[0], f"call {k}")


def test_an_output_that_is_the_state_before_the_update() -> None:
    """A one-frame delay line returns the buffer's old value, then overwrites it."""
    model = Delay()
    program = kiln.export(copy.deepcopy(model), (torch.ones(3),))
    module = Module(program.to_bytes())
    calls = [Call("forward", (torch.full((3,), float(k)),)) for k in range(4)]
    for k, (call, want) in enumerate(zip(calls, eager_calls({"forward": model}, calls))):
        assert_close(module.forward(*call.inputs)[0], want[0], f"call {k}")


def test_kiln_run_keeps_state_across_iterations(kiln_run, tmp_path: Path) -> None:
    model = RunningMean()
    path = kiln.export(copy.deepcopy(model), (torch.ones(4),)).save(tmp_path / "mean.pte")
    frame = torch.arange(4, dtype=torch.float32)
    np.save(tmp_path / "frame.npy", frame.numpy())
    result = subprocess.run(
        [*kiln_run, path, "--input", tmp_path / "frame.npy", "--iterations", "5", "--output-dir", tmp_path / "out"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    want = eager_calls({"forward": model}, [Call("forward", (frame,))] * 5)[-1][0]
    assert_close(torch.from_numpy(np.load(tmp_path / "out" / "output_0.npy")), want, "after 5 iterations")


@pytest.mark.parametrize("stale", STALE_BYTES)
def test_kiln_export_keeps_the_initial_value_whatever_the_planned_memory_held(stale: int) -> None:
    model = AccumulatingDoubler()
    program = kiln.export(copy.deepcopy(model), (torch.ones(3),))
    calls = accumulating_doubler_calls()
    got = run_in_stale_memory(program.to_bytes(), calls, stale)
    for k, (outputs, want) in enumerate(zip(got, eager_calls({"forward": model}, calls))):
        assert_close(outputs[0], want[0], f"call {k}")
    (state,) = Runtime.get().load_program(program.to_bytes()).method_meta("forward").states
    assert state.has_initial_value and state.nbytes == 12


def _without_initial_values(program: kiln.Program) -> bytes:
    """The program as ExecuTorch's exporter writes it without InitializedMutableBufferPass:
    its state tensors keep their planned memory but lose their initial data."""
    flatbuffer = copy.deepcopy(program.flatbuffer)
    for value in flatbuffer.executionPlan[0].values:
        if value.valType == pte.KernelTypes.Tensor and value.val.allocationInfo is not None:
            value.val.dataBufferIdx = 0
    flatbuffer.mutableDataSegments = []
    return kiln.Program(flatbuffer, program._segments).to_bytes()


def _eager_from_zero(calls: list[Call]) -> list[list[torch.Tensor]]:
    """Eager PyTorch's outputs with the buffer starting at zero (ExecuTorch's runtime's start)."""
    model = AccumulatingDoubler()
    model.total.zero_()
    return eager_calls({"forward": model}, calls)


@pytest.mark.parametrize("stale", STALE_BYTES)
def test_state_without_an_initial_value_starts_at_zero_at_every_load(stale: int) -> None:
    data = _without_initial_values(kiln.export(AccumulatingDoubler(), (torch.ones(3),)))
    calls = accumulating_doubler_calls()
    want = _eager_from_zero(calls)
    for load in range(2):
        for k, (outputs, expected) in enumerate(zip(run_in_stale_memory(data, calls, stale), want)):
            assert_close(outputs[0], expected[0], f"load {load}, call {k}")
    (state,) = Runtime.get().load_program(data).method_meta("forward").states
    assert not state.has_initial_value and (state.shape, state.scalar_type) == ((3,), "Float")


def test_summary_and_kiln_run_name_the_state_without_an_initial_value(kiln_run, tmp_path: Path) -> None:
    data = _without_initial_values(kiln.export(AccumulatingDoubler(), (torch.ones(3),)))
    program = kiln.Program.from_bytes(data)
    assert [s.has_initial_value for s in program.methods[0].states] == [False]
    assert "12 bytes, no initial value: starts at zero" in program.summary()
    (tmp_path / "p.pte").write_bytes(data)
    x = accumulating_doubler_calls()[0].inputs[0]
    np.save(tmp_path / "x.npy", x.numpy())
    result = subprocess.run(
        [*kiln_run, tmp_path / "p.pte", "--input", tmp_path / "x.npy", "--iterations", "2",
         "--fill-planned", "65", "--output-dir", tmp_path / "out"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Float [3], 12 bytes, no initial value in the program: starts at zero" in result.stdout
    want = _eager_from_zero([Call("forward", (x,))] * 2)[-1][0]
    assert_close(torch.from_numpy(np.load(tmp_path / "out" / "output_0.npy")), want, "after 2 iterations")


def _with_state_sizes(program: kiln.Program, sizes: list[int]) -> bytes:
    """The program with its (only) state tensor declared with other sizes."""
    flatbuffer = copy.deepcopy(program.flatbuffer)
    for value in flatbuffer.executionPlan[0].values:
        if value.valType == pte.KernelTypes.Tensor and value.val.allocationInfo is not None and value.val.dataBufferIdx:
            value.val.sizes = sizes
    return kiln.Program(flatbuffer, program._segments).to_bytes()


class KeepsLastFrame(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("last", torch.zeros(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.last.copy_(x)
        return x * 2


def test_state_of_the_wrong_shape_is_a_named_error() -> None:
    program = kiln.export(KeepsLastFrame(), (torch.ones(3),))
    # More state than the program's initial data holds (within the planned bytes, which
    # are 16-byte aligned): refused when the method loads.
    with pytest.raises(KilnRuntimeError) as too_big:
        Runtime.get().load_program(_with_state_sizes(program, [4])).load_method("forward")
    assert too_big.value.error_name == "ProgramSegmentOutOfBounds"
    assert "bytes [0, +16) past the 12-byte segment" in str(too_big.value)
    # More than its planned bytes: refused before anything is written.
    with pytest.raises(KilnRuntimeError) as outside:
        Runtime.get().load_program(_with_state_sizes(program, [64])).load_method("forward")
    assert outside.value.error_name == "InvalidProgram" and "outside planned buffer" in str(outside.value)
    # A state smaller than the values written into it: the write-back names both shapes.
    method = Runtime.get().load_program(_with_state_sizes(program, [2])).load_method("forward")
    with pytest.raises(KilnRuntimeError) as mismatch:
        method.execute([torch.ones(3)])
    assert mismatch.value.error_name == "InvalidArgument"
    assert "aten::copy_" in str(mismatch.value) and "[3]" in str(mismatch.value) and "[2]" in str(mismatch.value)


def test_export_refuses_a_new_value_of_another_shape_for_a_buffer() -> None:
    def tensor(shape: tuple[int, ...], role: TensorRole, dynamic: bool = False) -> TensorValue:
        return TensorValue("t", 6, 4, shape, role, dynamic=dynamic)

    state = tensor((1, 8), TensorRole.STATE)
    with pytest.raises(kiln.ExportError, match=r"shape \[4, 8\] \(upper bound\).*buffer 'hidden' of shape \[1, 8\]"):
        write_back(state, tensor((4, 8), TensorRole.ACTIVATION, dynamic=True), "hidden", "copy")
    call = write_back(state, tensor((1, 8), TensorRole.ACTIVATION), "hidden", "copy")
    assert call.operator == "aten::copy_" and call.args[0] is state and call.args[-1] is state
