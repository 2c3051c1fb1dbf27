"""Kiln's .pte files run on ExecuTorch 1.5.1's runtime (the independent reference)
and give eager PyTorch's numbers; ExecuTorch's deserializer parses them.

ExecuTorch lives in its own venv; executorch_run_pte.py runs there as a
subprocess and only loads the file and writes the outputs as .npy files.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import kiln

from .conftest import MODELS  # type: ignore[import-not-found]

pytestmark = pytest.mark.executorch

RUNNER = Path(__file__).with_name("executorch_run_pte.py")
RELATIVE_TOLERANCE = 1e-4


class ScalarArithmetic(torch.nn.Module):
    """Numbers where the schema wants tensors (0-dim constants), alpha, division."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 2 + 1.5) / 3 - x.sub(1, alpha=2)


class CastsAndViews(torch.nn.Module):
    """dtype conversions (their export-time assertions are dropped) and view copies."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = (x.to(torch.int32) * 2).to(torch.float32)
        return torch.cat([y.view(2, 3).permute(1, 0), x.view(3, 2)], dim=1).unsqueeze(0)


class ReturnsInput(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x, torch.relu(x).clone()


def run_with_executorch(
    python: Path, program: kiln.Program, inputs: tuple[torch.Tensor, ...], work: Path
) -> list[np.ndarray]:
    pte_path = program.save(work / "program.pte")
    input_paths = []
    for index, tensor in enumerate(inputs):
        path = work / f"input{index}.npy"
        np.save(path, tensor.numpy())
        input_paths.append(str(path))
    result = subprocess.run(
        [str(python), str(RUNNER), str(pte_path), str(work / "out"), *input_paths],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"ExecuTorch failed (exit {result.returncode}):\n{result.stderr[-3000:]}"
    return [np.load(p) for p in sorted((work / "out").glob("output*.npy"))]


def assert_matches_eager(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], outputs: list[np.ndarray]) -> None:
    with torch.no_grad():
        expected = model(*inputs)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        want = want.numpy()
        assert got.shape == want.shape and got.dtype == want.dtype
        scale = max(float(np.abs(want).max()), 1e-12)
        error = float(np.abs(got - want).max())
        assert error <= RELATIVE_TOLERANCE * scale, f"max abs error {error} vs max |ref| {scale}"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_run_on_executorch(executorch_python: Path, tmp_path: Path, name: str) -> None:
    model, inputs = MODELS[name]()
    outputs = run_with_executorch(executorch_python, kiln.export(model, inputs), inputs, tmp_path)
    assert_matches_eager(model, inputs, outputs)


@pytest.mark.parametrize("plan_inputs, plan_outputs", [(False, True), (True, False), (False, False)])
def test_unplanned_io_runs_on_executorch(
    executorch_python: Path, tmp_path: Path, plan_inputs: bool, plan_outputs: bool
) -> None:
    model, inputs = MODELS["small_cnn"]()
    program = kiln.export(model, inputs, plan_inputs=plan_inputs, plan_outputs=plan_outputs)
    assert_matches_eager(model, inputs, run_with_executorch(executorch_python, program, inputs, tmp_path))


@pytest.mark.parametrize("model_class", [ScalarArithmetic, CastsAndViews, ReturnsInput])
def test_special_cases_run_on_executorch(executorch_python: Path, tmp_path: Path, model_class: type) -> None:
    model = model_class()
    inputs = (torch.randn(6, generator=torch.Generator().manual_seed(5)),)
    outputs = run_with_executorch(executorch_python, kiln.export(model, inputs), inputs, tmp_path)
    assert_matches_eager(model, inputs, outputs)


SIGNATURE_SCRIPT = Path(__file__).with_name("executorch_emit_signature.py")


def describe_kiln_calls(program: kiln.Program) -> list[list]:
    """Kiln's kernel calls described like executorch_emit_signature.py describes ET's."""
    from kiln.serialize import program_generated as pte
    from kiln.serialize import read_pte

    program_t, _ = read_pte(program.to_bytes())
    plan = program_t.executionPlan[0]

    def describe(index: int) -> str:
        value = plan.values[index]
        val = value.val
        kind = {v: k for k, v in vars(pte.KernelTypes).items() if not k.startswith("_")}[value.valType]
        if kind == "Tensor":
            return f"Tensor{[int(s) for s in val.sizes]}"
        if kind == "Int":
            return f"Int={val.intVal}"
        if kind == "Bool":
            return f"Bool={val.boolVal}"
        if kind == "Double":
            return f"Double={val.doubleVal}"
        if kind == "IntList":
            return f"IntList={[plan.values[int(i)].val.intVal for i in val.items]}"
        if kind == "TensorList":
            return f"TensorList({len(val.items)})"
        return kind

    calls = []
    for instruction in plan.chains[0].instructions:
        call = instruction.instrArgs
        operator = plan.operators[call.opIndex]
        name = f"{operator.name.decode()}.{operator.overload.decode()}"
        calls.append([name, [describe(int(a)) for a in call.args]])
    return calls


@pytest.mark.parametrize("name", ["small_cnn", "mv2_block"])
def test_calls_match_executorch_emission(executorch_python: Path, tmp_path: Path, name: str) -> None:
    """Same operators, argument kinds, values and tensor shapes as ExecuTorch's own
    emitter, call by call; ExecuTorch keeps a clone that Kiln drops as an identity."""
    import json

    model, inputs = MODELS[name]()
    torch.export.save(torch.export.export(model, inputs), tmp_path / "model.pt2")
    result = subprocess.run(
        [str(executorch_python), str(SIGNATURE_SCRIPT), str(tmp_path / "model.pt2"), str(tmp_path / "et.json")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    reference = json.loads((tmp_path / "et.json").read_text())
    et_calls = [call for call in reference["calls"] if "clone" not in call[0]]
    program = kiln.export(model, inputs)
    assert describe_kiln_calls(program) == et_calls
    assert program.planned_buffer_sizes[0] <= reference["planned_buffer_sizes"][1]
