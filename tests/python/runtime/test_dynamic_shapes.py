"""Bounded dynamic shapes: inputs exported with torch.export.Dim(..., max=N) may be
smaller at run time; memory is planned for the bound; beyond it is a named error."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.export import Dim

import kiln
from kiln.runtime import KilnRuntimeError, Module

from .conftest import (  # type: ignore[import-not-found]
    DYNAMIC_BATCH_MAX,
    DYNAMIC_LENGTH_MAX,
    DynamicHead,
    assert_close,
    dynamic_head_inputs,
    dynamic_head_shapes,
)

SIZES = [(DYNAMIC_BATCH_MAX, DYNAMIC_LENGTH_MAX), (3, 5), (1, 2), (6, 11), (DYNAMIC_BATCH_MAX, 2)]


@pytest.fixture(scope="module")
def head() -> tuple[torch.nn.Module, kiln.Program]:
    torch.manual_seed(5)
    model = DynamicHead().eval()
    return model, kiln.export(model, dynamic_head_inputs(2, 4), dynamic_shapes=dynamic_head_shapes())


def test_runs_every_size_within_the_bounds_like_eager(head) -> None:
    model, program = head
    module = Module(program.to_bytes())
    for batch, length in SIZES:  # the method keeps working after smaller and larger calls
        inputs = dynamic_head_inputs(batch, length, seed=batch * 100 + length)
        with torch.no_grad():
            want = model(*inputs)
        got = module.forward(*inputs)
        for index, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"output {index} at batch {batch}, length {length}")


def test_memory_is_planned_for_the_bounds(head) -> None:
    model, program = head
    info = program.methods[0]
    assert [str(t) for t in info.inputs] == [
        f"float32[{DYNAMIC_BATCH_MAX}, 3, 6, 6] (upper bound)",
        f"float32[{DYNAMIC_BATCH_MAX}, {DYNAMIC_LENGTH_MAX}] (upper bound)",
    ]
    assert info.outputs[1].shape == (DYNAMIC_BATCH_MAX * DYNAMIC_LENGTH_MAX * 2,) and info.outputs[1].dynamic
    # The same model exported statically at the bounds plans exactly as much memory.
    static = kiln.export(model, dynamic_head_inputs(DYNAMIC_BATCH_MAX, DYNAMIC_LENGTH_MAX))
    assert info.planned_buffer_sizes == static.methods[0].planned_buffer_sizes
    meta = Module(program.to_bytes()).meta()
    assert [spec.is_dynamic for spec in meta.inputs] == [True, True]
    assert meta.inputs[1].shape == (DYNAMIC_BATCH_MAX, DYNAMIC_LENGTH_MAX)


def test_sizes_read_at_run_time_use_the_runtime_kernels(head) -> None:
    _, program = head
    assert "aten::sym_size.int" in program.operators


def test_beyond_the_bound_is_a_named_error(head) -> None:
    _, program = head
    module = Module(program.to_bytes())
    with pytest.raises(KilnRuntimeError) as above:
        module.forward(*dynamic_head_inputs(DYNAMIC_BATCH_MAX + 1, 4))
    assert above.value.error_name == "InputShapeMismatch"
    assert f"input 0: dimension 0 is {DYNAMIC_BATCH_MAX + 1}, above its upper bound {DYNAMIC_BATCH_MAX}" in str(above.value)
    # Fewer elements than the bound, but one dimension beyond it: not a shape the bound allows.
    images, _ = dynamic_head_inputs(1, 4)
    long_sequence = torch.randn(1, DYNAMIC_LENGTH_MAX + 1)
    with pytest.raises(KilnRuntimeError, match=f"dimension 1 is {DYNAMIC_LENGTH_MAX + 1}, above its upper bound"):
        module.forward(images, long_sequence)
    with pytest.raises(KilnRuntimeError) as rank:
        module.forward(images, torch.randn(4))
    assert rank.value.error_name == "InputShapeMismatch" and "[4] given" in str(rank.value)
    # The method still works after refused inputs.
    assert module.forward(*dynamic_head_inputs(2, 3))[0].shape == (2, 5)


def test_a_dimension_without_a_maximum_is_refused() -> None:
    with pytest.raises(kiln.ExportError, match=r"no upper bound: give each dynamic dimension a maximum"):
        kiln.export(DynamicHead().eval(), dynamic_head_inputs(2, 4),
                    dynamic_shapes={"images": {0: Dim("batch")}, "sequence": {0: Dim("batch")}})  # fmt: skip


class SizeArithmetic(torch.nn.Module):
    """Sizes computed at run time, returned as a number and used in a view."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        rows = x.shape[0] * 2
        return x.reshape(rows, x.shape[1] // 2), rows + x.shape[1] - 1


def test_size_arithmetic_and_an_int_output() -> None:
    model = SizeArithmetic()
    program = kiln.export(model, (torch.randn(3, 4),),
                          dynamic_shapes={"x": {0: Dim("rows", max=6), 1: Dim("half", max=5) * 2}})  # fmt: skip
    assert {"executorch_prim::mul.Scalar", "executorch_prim::floordiv.Scalar"} <= set(program.operators)
    assert program.methods[0].outputs[1].dtype == "int"
    module = Module(program.to_bytes())
    for rows, columns in [(3, 4), (1, 2), (6, 10), (5, 6)]:
        x = torch.randn(rows, columns)
        got, number = module.forward(x)
        want, want_number = model(x)
        assert_close(got, want, f"{rows}x{columns}")
        assert number == want_number


def test_kiln_run_takes_a_smaller_input(head, kiln_run, tmp_path: Path) -> None:
    model, program = head
    path = program.save(tmp_path / "head.pte")
    inputs = dynamic_head_inputs(3, 7)
    flags = []
    for index, tensor in enumerate(inputs):
        np.save(tmp_path / f"in{index}.npy", tensor.numpy())
        flags += ["--input", str(tmp_path / f"in{index}.npy")]
    result = subprocess.run([*kiln_run, path, *flags, "--output-dir", tmp_path / "out"],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"input 1: Float [3, 7] (upper bound [{DYNAMIC_BATCH_MAX}, {DYNAMIC_LENGTH_MAX}])" in result.stdout
    with torch.no_grad():
        want = model(*inputs)
    for index, w in enumerate(want):
        assert_close(torch.from_numpy(np.load(tmp_path / "out" / f"output_{index}.npy")), w, f"output {index}")
    np.save(tmp_path / "big.npy", torch.randn(DYNAMIC_BATCH_MAX + 1, 3, 6, 6).numpy())
    refused = subprocess.run([*kiln_run, path, "--input", tmp_path / "big.npy", "--input", tmp_path / "in1.npy"],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert refused.returncode == 1
    assert "error: InputShapeMismatch" in refused.stderr and "above its upper bound" in refused.stderr
