"""What the Python runtime API does with the inputs and arguments users actually pass:
0-d values keep their shape, other byte orders their values, and anything it cannot take
is a named KilnRuntimeError that says what is expected (never a bare TypeError or a
nanobind signature dump)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import kiln
from kiln.runtime import KilnRuntimeError, Method, Runtime


class ScaleAndShift(torch.nn.Module):
    """A 0-d input (a scalar tensor) next to a 1-d one."""

    def forward(self, scale: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return x * scale + 1.0


@pytest.fixture(scope="module")
def scalar_program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ScaleAndShift]:
    model = ScaleAndShift().eval()
    path = tmp_path_factory.mktemp("scalar") / "scale_and_shift.pte"
    kiln.export(model, (torch.tensor(2.0), torch.arange(4, dtype=torch.float32))).save(path)
    return path, model


@pytest.fixture
def method(scalar_program: tuple[Path, ScaleAndShift]) -> Method:
    return Runtime.get().load_program(scalar_program[0]).load_method("forward")


@pytest.mark.parametrize("scale", [np.array(3.0, np.float32), np.float32(3.0)],
                         ids=["0-d array", "numpy scalar"])
def test_zero_dimensional_numpy_input_keeps_shape(method: Method, scalar_program, scale) -> None:
    _, model = scalar_program
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    (got,) = method.execute([scale, x])
    want = model(torch.tensor(float(scale)), torch.from_numpy(x))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)
    assert tuple(method.meta.inputs[0].shape) == ()


def test_wrong_shape_names_the_shape_given(method: Method) -> None:
    with pytest.raises(KilnRuntimeError) as caught:
        method.execute([np.ones(1, np.float32), np.ones(4, np.float32)])
    assert caught.value.error_name == "InputShapeMismatch"
    assert "[1]" in str(caught.value)


def test_big_endian_array_runs_with_its_values(method: Method, scalar_program) -> None:
    _, model = scalar_program
    x = np.array([0.5, -1.5, 2.0, 4.0], dtype=">f4")
    (got,) = method.execute([np.array(2.0, ">f4"), x])
    want = model(torch.tensor(2.0), torch.tensor(x.astype(np.float32)))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "inputs, expected",
    [
        (None, "inputs is None; give a list of torch tensors or numpy arrays"),
        ({"scale": np.float32(1), "x": np.ones(4, np.float32)}, "inputs given as a dict"),
        ("x", "inputs is a str"),
        (object(), "inputs is a object"),
        ([np.float32(1), "text"], "input 1 is a str"),
        ([np.float32(1), np.array(["a", "b"])], "input 1 has numpy dtype <U1"),
    ],
    ids=["None", "dict", "str", "object", "str element", "string array"],
)
def test_inputs_the_runtime_cannot_take_are_named(method: Method, inputs: object, expected: str) -> None:
    with pytest.raises(KilnRuntimeError) as caught:
        method.execute(inputs)  # type: ignore[arg-type]
    assert caught.value.error_name in ("InvalidType", "InputDtypeMismatch")
    assert expected in str(caught.value)


@pytest.mark.parametrize(
    "temp_bytes, name, expected",
    [
        (-1, "InvalidArgument", "temp_bytes must be between 0 and"),
        (2**64, "InvalidArgument", "temp_bytes must be between 0 and"),
        (1.5, "InvalidType", "temp_bytes must be an int, got float"),
        ("1024", "InvalidType", "temp_bytes must be an int, got str"),
    ],
)
def test_bad_temp_bytes_is_named(scalar_program, temp_bytes: object, name: str, expected: str) -> None:
    program = Runtime.get().load_program(scalar_program[0])
    with pytest.raises(KilnRuntimeError) as caught:
        program.load_method("forward", temp_bytes=temp_bytes)  # type: ignore[arg-type]
    assert caught.value.error_name == name and expected in str(caught.value)


def test_numpy_integer_temp_bytes_is_taken(scalar_program) -> None:
    method = Runtime.get().load_program(scalar_program[0]).load_method("forward", temp_bytes=np.int64(0))
    (got,) = method.execute([np.float32(2), np.zeros(4, np.float32)])
    np.testing.assert_array_equal(got, np.ones(4, np.float32))


@pytest.mark.parametrize("iterations", [-1, 0, True])
def test_bad_iteration_count_is_named(method: Method, iterations: object) -> None:
    with pytest.raises(KilnRuntimeError) as caught:
        method.execute_timed([np.float32(1), np.ones(4, np.float32)], iterations=iterations)  # type: ignore[arg-type]
    assert caught.value.error_name in ("InvalidArgument", "InvalidType")
    assert "iterations must be" in str(caught.value)
