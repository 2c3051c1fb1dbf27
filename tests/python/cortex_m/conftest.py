"""Shared fixtures of the Cortex-M kernel tests: ExecuTorch's Cortex-M programs with
their reference outputs, made once per session in the ExecuTorch venv."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

MAKER = Path(__file__).with_name("executorch_cortex_m_programs.py")


#: The maker's test models (it also makes benchmark ones) and the largest difference, in
#: output steps, from ExecuTorch's reference each allows (0 = bit-exact): where that
#: reference computes in float what the kernels compute in fixed point as CMSIS-NN does
#: (softmax; an average's rounding of ties) the two may differ by one step.
TEST_MODELS = {"conv_family": 0, "pooling": 1, "classifier": 1, "activations": 0, "matmul": 0, "zoo_dscnn": 0}


@pytest.fixture(scope="session")
def executorch_programs(executorch_python: Path,
                        tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """(folder, {model: operators}) of ExecuTorch cortex-m55 programs (see MAKER)."""
    out = tmp_path_factory.mktemp("executorch_cortex_m")
    done = subprocess.run([str(executorch_python), str(MAKER), str(out), "--target", "cortex-m55",
                           "--models", ",".join(TEST_MODELS)], capture_output=True,
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
