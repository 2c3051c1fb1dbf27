"""Bundled programs and ETDumps on the device: the firmware (Cortex-M55 in QEMU) runs a
bundle's test case, prints Test_result: PASS and exits 0 — or FAIL and exits 2 for a wrong
expected output — and writes its ETDump to the host through semihosting."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from kiln.deploy.firmware import build_firmware, locate_sources
from kiln.deploy.prepare import prepare_program
from kiln.deploy.qemu import run_firmware
from kiln.devtools import Etdump, TestCase, bundle
from kiln.program import Program

pytestmark = pytest.mark.slow


def test_firmware_passes_a_bundle_and_fails_a_wrong_expected_output(tmp_path: Path) -> None:
    prepared = prepare_program("smallcnn", tmp_path / "sc")
    inputs = [np.load(p) for p in prepared.inputs]
    # Eager PyTorch's outputs (kiln-aot's reference), not the host runtime's.
    expected = [np.load(tmp_path / "sc" / "intermediates" / "reference_output_0.npy")]
    good = bundle(prepared.pte, [TestCase(inputs, expected)]).save(tmp_path / "good.bpte")
    wrong = bundle(prepared.pte, [TestCase(inputs, [expected[0] + np.float32(0.5)])]).save(tmp_path / "wrong.bpte")
    sources, build_dir = locate_sources(), tmp_path / "firmware"
    etdump = tmp_path / "dumps" / "sc.etdp"
    etdump.parent.mkdir()
    options = ["-DKILN_FIRMWARE_BUNDLE_ATOL=1e-5", "-DKILN_FIRMWARE_BUNDLE_RTOL=1e-5", f"-DKILN_FIRMWARE_ETDUMP={etdump}"]

    def run(bpte: Path):
        elf = build_firmware(dataclasses.replace(prepared, pte=bpte), build_dir, sources, tmp_path / "build.log",
                             selective=True, cmake_args=options)
        return run_firmware(elf, timeout=300)

    passed = run(good)
    assert passed.exit_code == 0 and "Test_result: PASS" in passed.output, passed.output[-3000:]
    dump = Etdump.load(etdump)
    instructions = Program.load(prepared.pte).method("forward").num_instructions
    assert [e.instruction for e in dump.runs[-1].profile_events if e.instruction >= 0] == list(range(instructions))
    failed = run(wrong)
    assert failed.exit_code == 2 and "Test_result: FAIL" in failed.output, failed.output[-3000:]
