"""ExecuTorch's own Ethos-U programs for the public architectures run on Kiln bit-exactly.

ExecuTorch 1.5.1's Arm flow (its quantizer, partitioner, TOSA lowering and Vela 5.1, in its
own venv) compiles reduced-size Wav2Letter-, DeepLabV3-, Conformer- and DeiT-style models and
MobileNetV3 in torchvision's structure for ethos-u55-128 and ethos-u85-256 (the full-size
programs are measured by benchmarks/executorch_programs.py). Kiln loads each .pte and runs

* every delegate's payload on the virtual NPU against Arm's TOSA reference model on the
  TOSA graph ExecuTorch lowered (its dumped intermediates), on random inputs: bit-exact;
* the whole program on its runtime, against ExecuTorch's quantized PyTorch model (the only
  expectation ExecuTorch offers: its own runtime cannot run Ethos-U programs).

Each program is compiled once per session (module-scope cache).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .executorch_programs import MODELS, TARGETS, delegate_mismatches, program_cache, program_distance

pytestmark = [pytest.mark.executorch, pytest.mark.slow]

# ExecuTorch's lowering is up to ~10 output steps from its own quantized model on deep
# CNNs (MobileNetV2); these reduced models stay well inside that.
_MAX_PROGRAM_LSB = 10.0
# The Conformer-style model takes ExecuTorch 4-7 minutes to compile here even with one layer:
# benchmarks/executorch_programs.py covers it (bit-exact on ethos-u55-128, checked by hand).
TEST_MODELS = sorted(set(MODELS) - {"conformer"})


@pytest.fixture(scope="module")
def et_programs(executorch_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return program_cache(executorch_python, tmp_path_factory)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", TEST_MODELS)
def test_executorch_delegates_are_bit_exact_on_the_virtual_npu(et_programs: Any, name: str, target: str) -> None:
    program = et_programs(name, target)
    assert program.tosa, f"{name} {target}: ExecuTorch delegated nothing"
    differing = delegate_mismatches(program)
    assert differing == [0] * len(differing), f"{name} {target}: elements differing per delegate {differing}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", TEST_MODELS)
def test_executorch_program_runs_on_kiln_near_its_quantized_model(et_programs: Any, name: str, target: str) -> None:
    program = et_programs(name, target)
    distances = program_distance(program)
    assert distances, f"{name} {target}: no outputs"
    for k, lsb in enumerate(distances):
        assert np.isfinite(lsb) and lsb <= _MAX_PROGRAM_LSB, (
            f"{name} {target} output {k}: {lsb:.1f} steps from ExecuTorch's quantized model")

