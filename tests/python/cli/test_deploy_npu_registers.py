"""kiln-deploy of MobileNetV2 for the Ethos-U85-256 (corstone-320) and of the zoo's smallcnn for
the Ethos-U55-128 (corstone-300; mv2 on it is the arm-baremetal preset's ctest
``firmware_mv2_u55`` and the quick start, so CI compiles it once), through the learning path's ``examples/arm/run.sh`` command: the firmware's
delegate goes through the register-level driver, whose register accesses at the board's NPU
base address trap in the MPU onto Kiln's virtual NPU (QEMU has no Ethos-U). Its outputs must
equal the host runtime's bit for bit (kiln-deploy compares them), and its log must show the
NPU read from its ID/CONFIG registers and, after the inference, the PMU's counters next to
Vela's estimate — the same counts the host runtime reads on the same program.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from kiln.runtime import Runtime

CHECKOUT = Path(__file__).resolve().parents[3]
RUN_SH = CHECKOUT / "examples" / "arm" / "run.sh"


@pytest.mark.slow
@pytest.mark.parametrize("model, target, board, npu, base", [
    ("smallcnn", "ethos-u55-128", "corstone-300", "Ethos-U55 with 128 MACs/cycle", "0x48102000"),
    ("mv2", "ethos-u85-256", "corstone-320", "Ethos-U85 with 256 MACs/cycle", "0x40004000"),
])
def test_program_runs_through_the_npu_register_window(tmp_path: Path, model: str, target: str, board: str, npu: str,
                                                      base: str) -> None:
    completed = subprocess.run(
        ["bash", str(RUN_SH), f"--model_name={model}", f"--target={target}", "--output=out", "--selective",
         "--aot_arm_compiler_flags=--delegate --quantize"],
        cwd=tmp_path, capture_output=True, text=True, timeout=3600)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-3000:]
    assert f"board {board}" in completed.stdout
    assert "output(s) equal the host runtime's bit for bit" in completed.stdout
    log = (tmp_path / "out" / "firmware.log").read_text()
    # The device model sits behind the board's register window, reached through the MPU.
    assert f"I [npu model] {target} (Kiln's virtual NPU) behind registers {base}-" in log
    assert "register accesses trap in the MPU" in log
    # The identity the driver read from ID/CONFIG, at the board's address.
    assert re.search(rf"I \[npu\] {npu}, .* \(read from its ID/CONFIG registers at {base}\)", log), log[-3000:]
    # After the inference: the PMU's counts, and Vela's estimate beside them.
    pmu = re.search(r"I \[npu\] PMU: (\d+) cycles, (\d+) active cycles, (\d+) AXI read beats, (\d+) AXI write beats "
                    r"\(\d+ delegate call\(s\)\); Vela's estimate: (\d+) cycles", log)
    assert pmu, log[-3000:]
    cycles, active, reads, writes, vela = (int(x) for x in pmu.groups())
    assert 0 < active <= cycles and reads > 0 and writes > 0 and vela > 0
    # The host runtime drives the same device through the same driver with a test seam in
    # place of the trap: on the same program and input it must read the same PMU counts.
    method = Runtime.get().load_program(tmp_path / "out" / f"{model}.pte").load_method("forward")
    method.execute([np.load(tmp_path / "out" / "input_0.npy")])
    host = method.npu_counters()
    assert (cycles, active, reads, writes) == (host["cycles"], host["active_cycles"], host["axi_read_beats"],
                                               host["axi_write_beats"])
    assert "outputs equal the host runtime's, bit for bit" in log
