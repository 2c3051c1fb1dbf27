"""Shared fixtures of the Cortex-M kernel tests: ExecuTorch's Cortex-M programs with
their reference outputs, made once per session in the ExecuTorch venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ET_PYTHON = os.environ.get("KILN_EXECUTORCH_PYTHON", "")
MAKER = Path(__file__).with_name("executorch_cortex_m_programs.py")
NEEDS_EXECUTORCH = pytest.mark.skipif(
    not (ET_PYTHON and Path(ET_PYTHON).exists()),
    reason="ExecuTorch venv not set up: run tools/setup_executorch.sh and set KILN_EXECUTORCH_PYTHON "
    "(tools/test.sh does both)",
)


@pytest.fixture(scope="session")
def executorch_programs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """(folder, {model: operators}) of ExecuTorch cortex-m55 programs (see MAKER)."""
    out = tmp_path_factory.mktemp("executorch_cortex_m")
    done = subprocess.run([ET_PYTHON, str(MAKER), str(out), "--target", "cortex-m55"], capture_output=True,
                          text=True, timeout=1800)
    if done.returncode != 0:
        pytest.fail(f"making ExecuTorch's Cortex-M programs failed:\n{done.stderr[-4000:]}")
    return out, json.loads((out / "operators.json").read_text())


@pytest.fixture(scope="session")
def kiln_run_command() -> list[str]:
    """The installed `kiln-run` console script."""
    script = Path(sys.executable).with_name("kiln-run")
    assert script.exists(), f"kiln-run is not installed next to {sys.executable}: pip install the package"
    return [str(script)]
