"""Kiln and ExecuTorch 1.5.1 run each other's programs with the same numbers.

The ExecuTorch side runs in its own venv (tools/setup_executorch.sh) through
et_worker.py; both sides are compared with eager PyTorch.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import kiln
import kiln.models
from kiln.runtime import Runtime

ET_PYTHON = os.environ.get("KILN_EXECUTORCH_PYTHON", "")
WORKER = Path(__file__).with_name("et_worker.py")
MODELS = ["add", "softmax", "mlp", "smallcnn", "resblock", "mv2"]

pytestmark = [
    pytest.mark.executorch,
    pytest.mark.skipif(not (ET_PYTHON and Path(ET_PYTHON).exists()),
                       reason="ExecuTorch venv not set up: run tools/setup_executorch.sh and "
                              "set KILN_EXECUTORCH_PYTHON (tools/test.sh does both)"),
]


def _eager(name: str) -> tuple[tuple[torch.Tensor, ...], list[np.ndarray]]:
    model, inputs = kiln.models.get(name)
    with torch.no_grad():
        out = model(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return inputs, [o.numpy() for o in outs]


def _assert_close(got: np.ndarray, ref: np.ndarray) -> None:
    assert got.shape == ref.shape and got.dtype == ref.dtype
    scale = max(float(np.abs(ref).max()), 1e-12)
    assert float(np.abs(got - ref).max()) / scale <= 1e-4


def _et(*args: str) -> None:
    subprocess.run([ET_PYTHON, str(WORKER), *args], check=True, capture_output=True, text=True)


@pytest.mark.parametrize("name", MODELS)
def test_executorch_runs_kiln_program(name: str, tmp_path: Path) -> None:
    inputs, reference = _eager(name)
    model, _ = kiln.models.get(name)
    kiln.export(model, inputs).save(tmp_path / "kiln.pte")
    input_files = []
    for i, x in enumerate(inputs):
        np.save(tmp_path / f"input_{i}.npy", x.numpy())
        input_files.append(str(tmp_path / f"input_{i}.npy"))
    _et("run", str(tmp_path / "kiln.pte"), str(tmp_path / "et_out"), *input_files)
    for i, ref in enumerate(reference):
        _assert_close(np.load(tmp_path / "et_out" / f"output_{i}.npy"), ref)


@pytest.mark.parametrize("name", MODELS)
def test_kiln_runs_executorch_program(name: str, tmp_path: Path) -> None:
    inputs, reference = _eager(name)
    model, _ = kiln.models.get(name)
    torch.export.save(torch.export.export(model, inputs), tmp_path / "model.pt2")
    _et("export", str(tmp_path / "model.pt2"), str(tmp_path / "et.pte"))
    outputs = Runtime().load_program(tmp_path / "et.pte").load_method("forward").execute(list(inputs))
    assert len(outputs) == len(reference)
    for got, ref in zip(outputs, reference):
        _assert_close(got.numpy(), ref)
