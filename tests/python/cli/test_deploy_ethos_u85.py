"""Ethos-U85 programs deploy: ExecuTorch's learning-path command for the U85 runs through
Kiln's ``examples/arm/run.sh``, from a folder outside the checkout, with the output and
intermediates in one folder that does not exist yet (as the learning path writes them).

The firmware gets the corstone-320 board (its board file: its memory sizes) and runs on QEMU's
mps3-an547 (Cortex-M55), since QEMU has no Corstone-320; the Ethos-U85 command stream runs
on the virtual NPU behind the firmware's register window, whose outputs must equal the host runtime's bit for
bit. One model and one configuration keep CI short: the learning path's flags with the
zoo's smallcnn instead of mv2, built ``--selective`` (only its kernels).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kiln.cli import deploy as kiln_deploy

CHECKOUT = Path(__file__).resolve().parents[3]
RUN_SH = CHECKOUT / "examples" / "arm" / "run.sh"


@pytest.mark.parametrize("target, board", [("ethos-u85-128", "corstone-320"), ("ethos-u85-2048", "corstone-320"),
                                           ("ethos-u55-128", "corstone-300"), (None, "corstone-300")])
def test_ethos_u85_targets_get_the_corstone_320_profile(target: str | None, board: str) -> None:
    argv = ["--model_name=add", "--aot_arm_compiler_flags=--delegate --quantize"]
    args = kiln_deploy.parse_arguments(argv + ([f"--target={target}"] if target else []))
    kiln_deploy.check_target(args)  # U85 targets are no longer refused
    chosen = kiln_deploy.board_for(args)
    kiln_deploy.check_board(args, chosen)
    assert (chosen.name, args.cpu) == (board, "cortex-m55")  # QEMU's core runs both


def test_cpu_programs_keep_the_corstone_300_profile() -> None:
    args = kiln_deploy.parse_arguments(["--model_name=add"])
    kiln_deploy.check_target(args)
    assert kiln_deploy.board_for(args).name == "corstone-300"


@pytest.mark.slow
def test_learning_path_command_for_the_u85_runs_the_firmware(tmp_path: Path) -> None:
    completed = subprocess.run(
        ["bash", str(RUN_SH), "--aot_arm_compiler_flags=--delegate --quantize --intermediates sc_u85/ --debug --evaluate",
         "--output=sc_u85", "--target=ethos-u85-128", "--model_name=smallcnn", "--selective"],
        cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-3000:]
    out = tmp_path / "sc_u85"
    assert "QEMU has no Corstone-320" in completed.stdout
    assert "output(s) equal the host runtime's bit for bit" in completed.stdout
    firmware_log = (out / "firmware.log").read_text()
    assert "target 'ethos-u85-128'" in firmware_log
    assert "outputs equal the host runtime's, bit for bit" in firmware_log
    manifest = json.loads((out / "smallcnn.manifest.json").read_text())
    assert manifest["board"]["name"] == "corstone-320"
    # The Corstone-320's 32 KiB TCMs hold only the vector table: code and data are in SRAM.
    linker_script = (out / "firmware-cortex-m55" / "examples" / "arm" / "corstone-320.ld").read_text()
    assert "ITCM (rwx) : ORIGIN = 0x00000000, LENGTH = 32768" in linker_script
    assert "} > SRAM AT > SRAM" in linker_script
    # --evaluate's TOSA reference check ran (the learning path asks for it).
    assert "evaluate: delegate" in completed.stdout
