"""Non-tensor method inputs (ints, floats, bools) in the Python API and kiln-run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.export import Dim

import kiln
from kiln.runtime import KilnRuntimeError, Module

from .conftest import ScaledWindow, assert_close  # type: ignore[import-not-found]

X = torch.randn(2, 6, generator=torch.Generator().manual_seed(4))
ARGS = (2, 0.5, True)


@pytest.fixture(scope="module")
def fixed() -> kiln.Program:
    """torch.export fixes the int, the float and the bool to these values."""
    return kiln.export(ScaledWindow(), (X, *ARGS))


def test_numbers_are_method_inputs(fixed) -> None:
    info = fixed.methods[0]
    assert [str(t) for t in info.inputs] == ["float32[2, 6]", "int", "float", "bool"]
    module = Module(fixed.to_bytes())
    assert [spec.tag for spec in module.meta().inputs] == ["Tensor", "Int", "Double", "Bool"]
    assert_close(module.forward(X, *ARGS)[0], ScaledWindow()(X, *ARGS), "fixed numbers")
    # numpy scalars and one-element tensors are numbers too.
    assert_close(module.forward(X, np.int64(2), torch.tensor(0.5), np.bool_(True))[0],
                 ScaledWindow()(X, *ARGS), "numpy and tensor numbers")  # fmt: skip


def test_another_value_for_a_fixed_number_is_refused_by_name(fixed) -> None:
    module = Module(fixed.to_bytes())
    with pytest.raises(KilnRuntimeError) as caught:
        module.forward(X, 3, 0.5, True)
    assert caught.value.error_name == "InvalidArgument"
    assert "input 1 was fixed to Int 2 when the program was exported; Int 3 given" in str(caught.value)
    with pytest.raises(KilnRuntimeError, match="input 2 was fixed to Double 0.5 .*; Double 0.75 given"):
        module.forward(X, 2, 0.75, True)
    with pytest.raises(KilnRuntimeError, match="input 3 was fixed to Bool true .*; Bool false given"):
        module.forward(X, 2, 0.5, False)
    with pytest.raises(KilnRuntimeError) as kind:
        module.forward(X, 2.0, 0.5, True)
    assert kind.value.error_name == "InvalidType" and "input 1 is a Int; a Double was given" in str(kind.value)
    with pytest.raises(KilnRuntimeError, match="input 1 is a Int .*; a str was given"):
        module.forward(X, "2", 0.5, True)


class Window(torch.nn.Module):
    """An int the program reads at run time (dynamic): the end of a slice."""

    def forward(self, x: torch.Tensor, end: int) -> torch.Tensor:
        return x[:end] * 2


def test_a_dynamic_int_input_takes_any_value() -> None:
    program = kiln.export(Window(), (torch.randn(8, 3), 4), dynamic_shapes={"x": None, "end": Dim.DYNAMIC})
    module = Module(program.to_bytes())
    x = torch.randn(8, 3)
    for end in (4, 1, 8, 0, 6):
        assert_close(module.forward(x, end)[0], Window()(x, end), f"end {end}")


def test_kiln_run_takes_numbers_on_the_command_line(fixed, kiln_run, tmp_path: Path) -> None:
    path = fixed.save(tmp_path / "window.pte")
    np.save(tmp_path / "x.npy", X.numpy())
    result = subprocess.run([*kiln_run, path, "--input", tmp_path / "x.npy", "--input", "2", "--input", "0.5",
                             "--input", "true", "--output-dir", tmp_path / "out"],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "input 1: Int 2 <- --input" in result.stdout and "input 3: Bool true <- --input" in result.stdout
    assert_close(torch.from_numpy(np.load(tmp_path / "out" / "output_0.npy")), ScaledWindow()(X, *ARGS), "kiln-run")
    # Without --input, numbers take the program's values.
    generated = subprocess.run([*kiln_run, path, "--output-dir", tmp_path / "generated"],
                               capture_output=True, text=True, timeout=120)  # fmt: skip
    assert generated.returncode == 0 and "input 2: Double 0.5 <- the program's value" in generated.stdout
    for value, message in (("two", "input 1 is an Int; 'two' is not one (give a decimal integer)"),
                           ("3", "input 1 was fixed to Int 2 when the program was exported; Int 3 given")):  # fmt: skip
        bad = subprocess.run([*kiln_run, path, "--input", tmp_path / "x.npy", "--input", value, "--input", "0.5",
                              "--input", "true"], capture_output=True, text=True, timeout=120)  # fmt: skip
        assert bad.returncode == 1 and message in bad.stderr, bad.stderr
