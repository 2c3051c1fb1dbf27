"""Selective build end to end with CMake: the host runner built for smallcnn with only
its kernels (and only their dtypes) runs the program and matches the runtime with every
kernel; a program that needs a kernel no library provides fails the configure, naming
the operator, the dtype and the program."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import kiln
from kiln.models import get as get_model
from kiln.runtime import Runtime
from kiln.serialize import program_generated as pte
from kiln.serialize import read_pte, write_pte

REPO = Path(__file__).resolve().parents[3]
_GENERATOR = ["-G", "Ninja"] if shutil.which("ninja") else []
_COMMON = ["-DCMAKE_BUILD_TYPE=Release", "-DKILN_BUILD_TESTS=OFF", "-DKILN_BUILD_PYTHON=OFF",
           "-DKILN_BUILD_HOST_RUNNER=ON"]


def _configure(build: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["cmake", "-S", str(REPO), "-B", str(build), *_GENERATOR, *_COMMON, *options],
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def smallcnn(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, torch.nn.Module]:
    folder = tmp_path_factory.mktemp("smallcnn")
    model, inputs = get_model("smallcnn")
    model.eval()
    kiln.export(model, inputs).save(folder / "smallcnn.pte")
    np.save(folder / "input_0.npy", inputs[0].numpy())
    return folder / "smallcnn.pte", folder / "input_0.npy", model


@pytest.fixture(scope="module")
def selective_runner(smallcnn, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kiln_executor_runner configured with -DKILN_SELECT_OPS_PROGRAM=smallcnn.pte and
    -DKILN_DTYPE_SELECTIVE=ON (builds the runtime and 7 kernel files)."""
    program, _, _ = smallcnn
    build = tmp_path_factory.mktemp("sel-build")
    configured = _configure(build, f"-DKILN_SELECT_OPS_PROGRAM={program}", "-DKILN_DTYPE_SELECTIVE=ON")
    assert configured.returncode == 0, configured.stdout + configured.stderr
    env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL="2")
    built = subprocess.run(["cmake", "--build", str(build), "--target", "kiln_executor_runner"],
                           capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return build


@pytest.mark.slow
def test_selective_runner_matches_the_full_runtime(smallcnn, selective_runner: Path, tmp_path: Path) -> None:
    program, input_file, model = smallcnn
    runner = selective_runner / "tools" / "kiln_run" / "kiln_executor_runner"
    run = subprocess.run([str(runner), str(program), "--input", str(input_file), "--output-dir", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    selective = np.load(tmp_path / "output_0.npy")
    x = np.load(input_file)
    full = Runtime.get().load_program(program).load_method("forward").execute([x])[0]
    np.testing.assert_array_equal(selective, np.asarray(full))  # same kernels, same bits
    with torch.no_grad():
        eager = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(selective, eager, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_selective_runner_has_only_the_programs_kernels(smallcnn, selective_runner: Path, tmp_path: Path) -> None:
    program, _, _ = smallcnn
    generated = selective_runner / "kernels" / "kiln_kernels_selected_registration"
    registered = re.findall(r'\{"([^"]+)", ', (generated / "register_cpu_kernels.cpp").read_text())
    assert registered == kiln.Program.load(program).operators
    compiled = sorted(p.name for p in (generated / "dtype_selective" / "portable").iterdir())
    assert len(compiled) == len(registered) < 10
    # A program with another operator fails at load time in this runner, naming it.
    other = tmp_path / "sub.pte"

    class _Sub(torch.nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return a - b

    kiln.export(_Sub(), (torch.randn(4), torch.randn(4))).save(other)
    runner = selective_runner / "tools" / "kiln_run" / "kiln_executor_runner"
    run = subprocess.run([str(runner), str(other)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "aten::sub.out is not registered" in run.stdout + run.stderr


def _edited_program(source: Path, target: Path, edit) -> Path:
    """A copy of a Kiln-written program with `edit(ProgramT)` applied (object API)."""
    program, segments = read_pte(source.read_bytes())
    edit(program)
    target.write_bytes(write_pte(program, segments))
    return target


def _rename_relu(program: pte.ProgramT) -> None:
    for operator in program.executionPlan[0].operators:
        if operator.name in ("aten::relu", b"aten::relu"):
            operator.name = "aten::relu_that_does_not_exist"


def _int_convolution_input(program: pte.ProgramT) -> None:
    plan = program.executionPlan[0]
    conv = next(i for i, op in enumerate(plan.operators) if op.name in ("aten::convolution", b"aten::convolution"))
    for chain in plan.chains:
        for instruction in chain.instructions:
            if instruction.instrArgsType == pte.InstructionArguments.KernelCall and instruction.instrArgs.opIndex == conv:
                plan.values[instruction.instrArgs.args[0]].val.scalarType = 3  # Int
                return


@pytest.mark.slow
def test_configure_fails_naming_a_missing_operator_and_the_program(smallcnn, tmp_path: Path) -> None:
    program, _, _ = smallcnn
    broken = _edited_program(program, tmp_path / "renamed.pte", _rename_relu)
    result = _configure(tmp_path / "build", f"-DKILN_SELECT_OPS_PROGRAM={broken}")
    assert result.returncode != 0
    message = " ".join((result.stdout + result.stderr).split())  # CMake wraps long lines
    assert f"program {broken} needs operator aten::relu_that_does_not_exist.out with dtypes Float" in message
    assert "no kernel library provides it" in message


@pytest.mark.slow
def test_configure_fails_naming_an_unsupported_dtype(smallcnn, tmp_path: Path) -> None:
    program, _, _ = smallcnn
    broken = _edited_program(program, tmp_path / "int_conv.pte", _int_convolution_input)
    result = _configure(tmp_path / "build", f"-DKILN_SELECT_OPS_PROGRAM={broken}")
    assert result.returncode != 0
    message = " ".join((result.stdout + result.stderr).split())
    assert f"program {broken} needs operator aten::convolution.out with dtype Int" in message


@pytest.mark.slow
def test_configure_fails_for_an_unknown_operator_in_a_yaml_selection(tmp_path: Path) -> None:
    selection = tmp_path / "ops.yaml"
    selection.write_text("- aten::relu.out\n- aten::no_such_op.out\n")
    result = _configure(tmp_path / "build", f"-DKILN_SELECT_OPS_YAML={selection}")
    assert result.returncode != 0
    message = " ".join((result.stdout + result.stderr).split())
    assert f"selection file {selection} needs operator aten::no_such_op.out" in message
