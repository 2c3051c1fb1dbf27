"""kiln.runtime runs kiln.export's programs and matches eager PyTorch."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

from kiln.runtime import KilnRuntimeError, Method, Runtime

MODELS = ["add", "softmax", "elementwise"]


def _load(path_or_bytes: object) -> Method:
    return Runtime.get().load_program(path_or_bytes).load_method("forward")


@pytest.mark.parametrize("name", MODELS)
def test_outputs_match_eager_from_path(exported, name: str) -> None:
    program = exported(name)
    outputs = _load(program.path).execute(list(program.inputs))
    reference = program.eager()
    assert len(outputs) == len(reference)
    for got, want in zip(outputs, reference):
        assert isinstance(got, torch.Tensor)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", MODELS)
def test_outputs_match_eager_from_bytes_with_numpy(exported, name: str) -> None:
    program = exported(name)
    method = _load(program.path.read_bytes())
    outputs = method.execute([x.numpy() for x in program.inputs])
    for got, want in zip(outputs, program.eager()):
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6)


def test_fresh_inputs_and_outputs_are_copies(exported) -> None:
    program = exported("elementwise")
    method = _load(program.path)
    generator = torch.Generator().manual_seed(123)
    first_inputs = [torch.randn(x.shape, generator=generator) for x in program.inputs]
    second_inputs = [torch.randn(x.shape, generator=generator) for x in program.inputs]
    first = method.execute(first_inputs)
    kept = [t.clone() for t in first]
    second = method.execute(second_inputs)
    # The second run must not have overwritten the first run's results.
    for got, want in zip(first, kept):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    for got, want in zip(second, program.eager(*second_inputs)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_non_contiguous_torch_input_is_made_contiguous(exported) -> None:
    program = exported("add")
    x, y = program.inputs
    # Same values and shape, but laid out transposed in memory.
    x_strided = x.transpose(-1, -2).contiguous().transpose(-1, -2)
    assert not x_strided.is_contiguous()
    (got,) = _load(program.path).execute([x_strided, y])
    torch.testing.assert_close(got, program.eager(x, y)[0], rtol=1e-5, atol=1e-6)


def test_meta_describes_the_example_inputs(exported) -> None:
    program = exported("elementwise")
    loaded = Runtime.get().load_program(program.path)
    assert loaded.method_names == ["forward"]
    method = loaded.load_method("forward")
    meta = method.meta
    assert [spec.shape for spec in meta.inputs] == [tuple(x.shape) for x in program.inputs]
    assert [spec.dtype for spec in meta.inputs] == [np.dtype(np.float32)] * 2
    assert [spec.shape for spec in meta.outputs] == [tuple(o.shape) for o in program.eager()]
    assert meta.planned_buffer_sizes and all(size > 0 for size in meta.planned_buffer_sizes)
    assert "aten::add.out" in meta.operators and "aten::sigmoid.out" in meta.operators
    # The method allocator is sized exactly from the program: init fits and uses it.
    assert meta.method_allocator_used is not None
    assert 0 < meta.method_allocator_used <= meta.method_allocator_size
    assert meta.method_allocator_size == loaded.method_meta("forward").method_allocator_size
    assert meta.temp_allocator_size == 1 << 20


def test_program_outlives_its_python_handle(exported) -> None:
    program = exported("add")
    method = Runtime.get().load_program(program.path).load_method()
    gc.collect()  # the Program object is gone from Python's view; the method keeps it
    (got,) = method.execute(list(program.inputs))
    torch.testing.assert_close(got, program.eager()[0], rtol=1e-5, atol=1e-6)


def test_execute_timed_runs_each_iteration(exported) -> None:
    program = exported("softmax")
    run = _load(program.path).execute_timed(list(program.inputs), iterations=4)
    assert len(run.times_ms) == 4 and all(t > 0 for t in run.times_ms)
    assert run.min_ms <= run.median_ms
    torch.testing.assert_close(run.outputs[0], program.eager()[0], rtol=1e-5, atol=1e-6)


def test_unknown_method_is_not_found(exported) -> None:
    loaded = Runtime.get().load_program(exported("add").path)
    with pytest.raises(KilnRuntimeError) as caught:
        loaded.load_method("backward")
    assert caught.value.error_name == "NotFound"
    assert "backward" in str(caught.value)
