"""ExecuTorch's Cortex-M programs on the Cortex-M55 firmware in QEMU (mps3-an547), with
the kernels compiled for Helium (MVE) and, on the same core, for the DSP extension: the
firmware compares its outputs with ExecuTorch's reference outputs bit for bit (the host
runtime's where the reference computes in float, see test_executorch_programs.py) and
exits 0 only if every byte agrees. One firmware build per flavour; each program reuses it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kiln.deploy.cortex_m import build_and_run, prepare_existing

from .conftest import TEST_MODELS  # type: ignore[import-not-found]

pytestmark = [pytest.mark.executorch, pytest.mark.slow]


@pytest.mark.parametrize("flavour", ["mve", "dsp"])
def test_firmware_matches_reference(flavour: str, executorch_programs, kiln_run_command,
                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    folder, _ = executorch_programs
    build_dir = tmp_path_factory.mktemp(f"firmware_{flavour}")
    for name, tolerance in TEST_MODELS.items():
        inputs = sorted(folder.glob(f"{name}_input_*.npy"))
        if tolerance == 0:
            expected = sorted(folder.glob(f"{name}_expected_*.npy"))
        else:
            host = build_dir / f"{name}_host"
            command = [*kiln_run_command, str(folder / f"{name}.pte"), "--output-dir", str(host)]
            for path in inputs:
                command += ["--input", str(path)]
            subprocess.run(command, check=True, capture_output=True, timeout=300)
            expected = sorted(host.glob("output_*.npy"))
        prepared = prepare_existing(folder / f"{name}.pte", inputs, expected, build_dir / name)
        run = build_and_run(prepared, flavour, build_dir / "build")
        assert run.result.exit_code == 0, f"{name} ({flavour}): {run.result.meaning}\n{run.result.output[-3000:]}"
        assert "bit for bit" in run.result.output, run.result.output[-2000:]
