"""Programs the devtools tests share, compiled once per session from a folder outside the
checkout (the way users work): a small fp32 CNN, and MobileNetV2 for the Ethos-U55-128
compiled by ``kiln-aot --evaluate --per-layer``."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

import kiln
import kiln.models


@dataclass
class CompiledModel:
    folder: Path
    pte: Path
    model: torch.nn.Module
    inputs: tuple[torch.Tensor, ...]
    input_files: list[Path]


@pytest.fixture(scope="session")
def smallcnn(tmp_path_factory: pytest.TempPathFactory) -> CompiledModel:
    folder = tmp_path_factory.mktemp("smallcnn")
    model, inputs = kiln.models.get("smallcnn")
    pte = kiln.export(model, inputs).save(folder / "programs" / "smallcnn.pte")
    input_file = folder / "input_0.npy"
    np.save(input_file, inputs[0].numpy())
    return CompiledModel(folder, pte, model, inputs, [input_file])


@dataclass
class Mv2Npu:
    folder: Path  # the working folder: out/mv2_u55.pte, inter/ (intermediates and PNGs)
    aot_output: str

    @property
    def pte(self) -> Path:
        return self.folder / "out" / "mv2_u55.pte"

    @property
    def intermediates(self) -> Path:
        return self.folder / "inter"


@pytest.fixture(scope="session")
def mv2_u55(tmp_path_factory: pytest.TempPathFactory) -> Mv2Npu:
    """kiln-aot on MobileNetV2 → int8 → ethos-u55-128 with --evaluate --per-layer, run from
    an empty folder with relative paths into folders that do not exist yet."""
    folder = tmp_path_factory.mktemp("mv2_u55")
    command = [sys.executable, "-m", "kiln.cli.aot", "--model_name", "mv2", "--quantize", "--delegate",
               "--target", "ethos-u55-128", "--calibration_samples", "2", "--output", "out/mv2_u55.pte",
               "--intermediates", "inter", "--evaluate", "--per-layer"]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return Mv2Npu(folder, done.stdout)


@pytest.fixture(scope="session")
def cli():
    """cli("run", *args, cwd=folder): a console script's module (kiln.cli.run,
    kiln.cli.inspector, ...) run as a user runs it; returns the CompletedProcess."""

    def run(tool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", f"kiln.cli.{tool}", *map(str, args)], cwd=cwd,
                              capture_output=True, text=True, timeout=900)

    return run
