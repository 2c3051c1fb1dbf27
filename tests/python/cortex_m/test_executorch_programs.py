"""ExecuTorch 1.5.1's Cortex-M programs (`aot_arm_compiler --target cortex-m55 -q`'s flow)
run in kiln-run bit for bit as ExecuTorch's reference implementations of the cortex_m::
operators compute them (its backends/cortex_m/ops/operators.py, run in its venv).

The programs keep activations channels-last and mix cortex_m:: kernels with portable
float ones (a clamp ExecuTorch could not fuse stays a float hardtanh between a
dequantize and a quantize). Where ExecuTorch's reference computes in float what the
kernels (as CMSIS-NN) compute in fixed point - softmax, and ties of an average - the
two may differ by one step; TEST_MODELS (conftest.py) says which models allow that.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.executorch, pytest.mark.slow]

from .conftest import TEST_MODELS  # type: ignore[import-not-found]


@pytest.mark.parametrize("name", sorted(TEST_MODELS))
def test_kiln_run_matches_executorch_reference(name: str, executorch_programs, kiln_run_command,
                                               tmp_path: Path) -> None:
    folder, operators = executorch_programs
    assert any(op.startswith("cortex_m::") for op in operators[name]), operators[name]
    inputs = sorted(folder.glob(f"{name}_input_*.npy"))
    command = [*kiln_run_command, str(folder / f"{name}.pte"), "--output-dir", str(tmp_path / "out")]
    for path in inputs:
        command += ["--input", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    expected = sorted(folder.glob(f"{name}_expected_*.npy"))
    assert expected
    for i, path in enumerate(expected):
        want = np.load(path)
        got = np.load(tmp_path / "out" / f"output_{i}.npy")
        assert got.shape == want.shape and got.dtype == want.dtype
        if want.dtype == np.float32:
            # A dequantized output: compare in steps of the output's scale.
            levels = np.unique(want)
            step = float(np.min(np.diff(levels))) if levels.size > 1 else 1.0
            diff = np.abs(got - want) / step
        else:
            diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
        assert float(diff.max()) <= TEST_MODELS[name] + 1e-3, f"{name} output {i}: max difference {diff.max()} steps"
