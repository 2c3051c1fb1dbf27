"""Every example model, exported by Kiln, matches eager PyTorch on Kiln's runtime,
through the Python API and through the kiln-run host runner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import kiln
import kiln.models
from kiln.runtime import Runtime

# Relative to the output's largest magnitude: what the portable float kernels must meet.
TOLERANCE = 1e-4


def _eager(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> list[np.ndarray]:
    with torch.no_grad():
        out = model(*inputs)
    return [o.numpy() for o in (out if isinstance(out, (tuple, list)) else (out,))]


def _relative_error(got: np.ndarray, ref: np.ndarray) -> float:
    assert got.shape == ref.shape and got.dtype == ref.dtype
    return float(np.abs(got - ref).max()) / max(float(np.abs(ref).max()), 1e-12)


@pytest.fixture(scope="module", params=kiln.models.names())
def exported(request, tmp_path_factory) -> tuple[str, Path, tuple[torch.Tensor, ...], list[np.ndarray]]:
    name = request.param
    model, inputs = kiln.models.get(name)
    path = tmp_path_factory.mktemp(name) / f"{name}.pte"
    kiln.export(model, inputs).save(path)
    return name, path, inputs, _eager(model, inputs)


def test_python_api_matches_eager(exported) -> None:
    _, path, inputs, reference = exported
    outputs = Runtime().load_program(path).load_method("forward").execute(list(inputs))
    assert len(outputs) == len(reference)
    for got, ref in zip(outputs, reference):
        assert _relative_error(got.numpy(), ref) <= TOLERANCE


def test_kiln_run_matches_eager(exported, tmp_path: Path) -> None:
    _, path, inputs, reference = exported
    args = [sys.executable, "-m", "kiln.cli.run", str(path), "--output-dir", str(tmp_path)]
    for i, x in enumerate(inputs):
        np.save(tmp_path / f"input_{i}.npy", x.numpy())
        args += ["--input", str(tmp_path / f"input_{i}.npy")]
    result = subprocess.run(args, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "execute:" in result.stdout and "planned memory" in result.stdout
    for i, ref in enumerate(reference):
        assert _relative_error(np.load(tmp_path / f"output_{i}.npy"), ref) <= TOLERANCE
