"""A program that compiles runs: kiln.export refuses, at compile time, a kernel call whose
dtypes no kernel of the program's kernel libraries takes (the op tables
kernels/<library>/op_table.yaml list each kernel's dtypes), naming the node, the
operator and the dtype; kiln-aot says so in one line with exit status 2."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import kiln
from kiln.passes import kernel_availability
from kiln.runtime import Runtime


class ToHalf(torch.nn.Module):
    """A conversion to float16: aten::_to_copy.out writing a Half tensor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.to(torch.float16)


def _portable_dtypes(operator: str) -> frozenset[str]:
    [kernel] = kernel_availability.kernel_table(("portable",))[operator]
    return kernel.dtypes


def test_a_call_without_a_kernel_for_its_dtype_is_refused() -> None:
    assert "Half" not in _portable_dtypes("aten::_to_copy.out")  # the premise of this test
    with pytest.raises(kiln.UnsupportedDtypeError) as caught:
        kiln.export(ToHalf(), (torch.randn(4) * 10,))
    error = caught.value
    assert (error.node, error.operator, error.dtype) == ("_to_copy", "aten::_to_copy.out", "Half")
    assert isinstance(error, kiln.UnsupportedOperatorError) and isinstance(error, kiln.KilnError)
    message = str(error)
    assert "node '_to_copy' calls aten::_to_copy.out with Float, Half tensors" in message
    assert "portable kernel takes Bool, Byte, Char, Double, Float, Int, Long, Short" in message


class BoolSum(torch.nn.Module):
    """bool + bool is a bool (logical or) in PyTorch: aten::add.out writing a Bool tensor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x > 0) + (x < 1)


def test_an_out_dtype_the_kernel_does_not_write_is_refused() -> None:
    """The add kernel reads bool operands (bool + int16 compiles and runs) but writes only
    real dtypes: its op-table row says so with out_dtypes, and export refuses a Bool out."""
    [kernel] = kernel_availability.kernel_table(("portable",))["aten::add.out"]
    assert "Bool" in kernel.dtypes and "Bool" not in kernel.out_dtypes  # the premise
    with pytest.raises(kiln.UnsupportedDtypeError) as caught:
        kiln.export(BoolSum(), (torch.randn(4),))
    assert (caught.value.operator, caught.value.dtype) == ("aten::add.out", "Bool")
    assert "no kernel writes a Bool out" in str(caught.value)

    class BoolPlusShort(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return (x > 0) + x.to(torch.int16)

    x = torch.randn(4) * 10
    program = kiln.export(BoolPlusShort(), (x,))
    [got] = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x])
    torch.testing.assert_close(got, BoolPlusShort()(x))


def test_a_kernel_library_that_takes_the_dtype_makes_the_program_compile(monkeypatch) -> None:
    """Libraries are layered most specific first, as the runtime registers them: a
    library with a float16 conversion kernel satisfies the call."""
    original = kernel_availability.op_table_text
    fast_table = "- {op: aten::_to_copy.out, kernel: kiln::fast::to_copy_out, source: op_to_copy.cpp, dtypes: [Half, Float]}\n"
    monkeypatch.setattr(kernel_availability, "op_table_text",
                        lambda library: fast_table if library == "fast" else original(library))
    kernel_availability.kernel_table.cache_clear()
    try:
        program = kiln.export(ToHalf(), (torch.randn(4),), kernel_libraries=("fast", "portable"))
        assert program.operators == ["aten::_to_copy.out"]
        with pytest.raises(kiln.UnsupportedDtypeError):
            kiln.export(ToHalf(), (torch.randn(4),), kernel_libraries=("portable",))
    finally:
        kernel_availability.kernel_table.cache_clear()


def test_every_call_of_a_program_that_compiles_has_a_kernel() -> None:
    """The check agrees with the runtime: what passes it loads and runs."""

    class Mixed(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.where(x > 0, x * 2, torch.softmax(x, dim=-1)).argmax(dim=-1)

    x = torch.randn(2, 5)
    program = kiln.export(Mixed(), (x,))
    [got] = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x])
    torch.testing.assert_close(got, Mixed()(x))


_USER_MODEL = textwrap.dedent(
    """
    import torch

    class Counts(torch.nn.Module):
        def forward(self, x):
            return x.to(torch.float16)

        def get_example_inputs(self):
            return (torch.randn(4) * 10,)
    """
)


def _kiln_aot(folder: Path, *flags: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "kiln.cli.aot", "--model_name", "counts.py:Counts", "-o", "out/counts.pte", *flags]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)


def test_kiln_aot_reports_the_missing_kernel_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "counts.py").write_text(_USER_MODEL)
    result = _kiln_aot(tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "aten::_to_copy.out" in errors[0] and "Half" in errors[0] and "'_to_copy'" in errors[0]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out" / "counts.pte").exists()
    debug = _kiln_aot(tmp_path, "--debug")
    assert debug.returncode != 0 and "Traceback" in debug.stderr and "UnsupportedDtypeError" in debug.stderr
