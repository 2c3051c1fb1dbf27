"""ExecuTorch 1.5.1's XNNPACK programs run in Kiln (kiln-run and kiln.runtime) with
ExecuTorch's numbers.

The programs come from ExecuTorch's own export flow (XnnpackPartitioner; int8 with its
XNNPACKQuantizer) in its venv, which also runs them with its runtime: those outputs are
the reference. Both sides run XNNPACK kernels, but different versions (ExecuTorch's
pinned one, Debian's 2022 snapshot here): fp32 matches to 1e-5 relative (different
micro-kernels may sum in a different order); int8 matches exactly, because both compute
integer accumulators and requantize with the same fixed-point rounding.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import kiln.models
from kiln.runtime import Module, Runtime

pytestmark = [pytest.mark.executorch]

WORKER = Path(__file__).with_name("executorch_xnnpack_programs.py")
FLAVOURS = ["fp32", "int8"]
CASES = [(name, flavour) for name in ["mlp", "smallcnn", "resblock"] for flavour in FLAVOURS] + [("dscnn", "int8")]
MV2_CASES = [("mv2", flavour) for flavour in FLAVOURS]


def _make_programs(folder: Path, executorch_python: Path, cases: list[tuple[str, str]]) -> Path:
    """ExecuTorch exports each (model, flavour) and runs it: folder/NAME_FLAVOUR.pte and
    its expected outputs."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in sorted({name for name, _ in cases}):
        model, inputs = kiln.models.get(name)
        torch.export.save(torch.export.export(model, inputs), folder / f"{name}.pt2")
        np.savez(folder / f"{name}_inputs.npz", **{f"in{i}": x.numpy() for i, x in enumerate(inputs)})
        for i, x in enumerate(inputs):
            np.save(folder / f"{name}_input_{i}.npy", x.numpy())
    args = [item for case in cases for item in case]
    done = subprocess.run([str(executorch_python), str(WORKER), "make", str(folder), *args],
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory, executorch_python: Path) -> Path:
    """All the programs, made by one ExecuTorch process (its import alone takes seconds)."""
    return _make_programs(tmp_path_factory.mktemp("et_xnnpack"), executorch_python, CASES + MV2_CASES)


def _inputs(folder: Path, name: str) -> list[np.ndarray]:
    arrays = np.load(folder / f"{name}_inputs.npz")
    return [arrays[f"in{i}"] for i in range(len(arrays.files))]


def _expected(folder: Path, name: str, flavour: str) -> list[np.ndarray]:
    arrays = np.load(folder / f"{name}_{flavour}_expected.npz")
    return [arrays[f"out{i}"] for i in range(len(arrays.files))]


def _assert_matches(got: np.ndarray, ref: np.ndarray, flavour: str) -> None:
    assert got.shape == ref.shape and got.dtype == ref.dtype
    if flavour == "int8":
        # The outputs are dequantized int8: equal values, bit for bit.
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * float(np.abs(ref).max()))


def _kiln_run(folder: Path, name: str, flavour: str, threads: int, cwd: Path) -> list[np.ndarray]:
    """kiln-run from `cwd` with paths relative to it, into an output folder that does not exist."""
    script = Path(sys.executable).with_name("kiln-run")
    assert script.exists(), f"kiln-run is not installed next to {sys.executable}"
    out = cwd / f"out_{name}_{flavour}_{threads}"
    inputs = sorted(folder.glob(f"{name}_input_*.npy"))
    command = [str(script), os.path.relpath(folder / f"{name}_{flavour}.pte", cwd), "--threads", str(threads),
               "--output-dir", out.name]
    for path in inputs:
        command += ["--input", os.path.relpath(path, cwd)]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return [np.load(path) for path in sorted(out.glob("output_*.npy"))]


def _python_run(folder: Path, name: str, flavour: str, threads: int) -> list[np.ndarray]:
    module = Module(folder / f"{name}_{flavour}.pte", threads=threads)
    return [np.asarray(out) for out in module.forward(*_inputs(folder, name))]


@pytest.mark.parametrize(("name", "flavour"), CASES)
def test_kiln_run_matches_executorch(programs: Path, name: str, flavour: str, tmp_path: Path) -> None:
    expected = _expected(programs, name, flavour)
    got = _kiln_run(programs, name, flavour, 1, tmp_path)
    assert len(got) == len(expected)
    for g, ref in zip(got, expected):
        _assert_matches(g, ref, flavour)


@pytest.mark.parametrize(("name", "flavour"), CASES)
def test_python_runtime_matches_executorch(programs: Path, name: str, flavour: str) -> None:
    expected = _expected(programs, name, flavour)
    got = _python_run(programs, name, flavour, 1)
    assert len(got) == len(expected)
    for g, ref in zip(got, expected):
        _assert_matches(g, ref, flavour)


@pytest.mark.parametrize(("name", "flavour"), [("smallcnn", "fp32"), ("resblock", "int8")])
def test_two_threads_give_the_same_outputs(programs: Path, name: str, flavour: str, tmp_path: Path) -> None:
    one = _python_run(programs, name, flavour, 1)
    two = _python_run(programs, name, flavour, 2)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(one, _kiln_run(programs, name, flavour, 2, tmp_path)):
        np.testing.assert_array_equal(a, b)


def test_threads_must_be_positive(programs: Path) -> None:
    program = Runtime.get().load_program(programs / "mlp_fp32.pte")
    with pytest.raises(kiln.KilnError, match="threads"):
        program.load_method("forward", threads=0)


@pytest.mark.slow
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_mv2_matches_executorch(programs: Path, flavour: str, tmp_path: Path) -> None:
    expected = _expected(programs, "mv2", flavour)
    for got in (_kiln_run(programs, "mv2", flavour, 2, tmp_path), _python_run(programs, "mv2", flavour, 1)):
        assert len(got) == len(expected)
        for g, ref in zip(got, expected):
            _assert_matches(g, ref, flavour)
