"""Bundled programs: written by kiln.devtools.bundle with eager PyTorch's outputs, run by
kiln-run (PASS/FAIL per test case), exchanged with ExecuTorch both ways, and bad files
refused by name."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from kiln.devtools import BundledProgram, BundledProgramError, TestCase, bundle

ET_PYTHON = os.environ.get("KILN_EXECUTORCH_PYTHON", "")
WORKER = Path(__file__).with_name("executorch_devtools_worker.py")
needs_executorch = pytest.mark.skipif(not (ET_PYTHON and Path(ET_PYTHON).exists()),
                                      reason="ExecuTorch venv not set up (KILN_EXECUTORCH_PYTHON)")


def _cases(smallcnn) -> list[TestCase]:
    other = np.random.default_rng(3).standard_normal(smallcnn.inputs[0].shape).astype(np.float32)
    return [TestCase([smallcnn.inputs[0]]), TestCase([other])]


@pytest.fixture(scope="module")
def bundles(smallcnn, tmp_path_factory) -> tuple[Path, Path]:
    """(good.bpte, bad.bpte): expected outputs from eager PyTorch; in bad, case 1's are off by 0.5."""
    folder = tmp_path_factory.mktemp("bundles")
    good = bundle(smallcnn.pte, _cases(smallcnn), model=smallcnn.model)
    bad = BundledProgram.from_bytes(good.to_bytes())
    bad.suites[0].test_cases[1].expected_outputs[0] = bad.suites[0].test_cases[1].expected_outputs[0] + np.float32(0.5)
    return good.save(folder / "good.bpte"), bad.save(folder / "sub" / "bad.bpte")


def test_kiln_run_passes_a_bundle_and_fails_a_wrong_expected_output(bundles, cli, tmp_path: Path) -> None:
    good, bad = bundles
    passed = cli("run", good, cwd=tmp_path)
    assert passed.returncode == 0, passed.stderr
    assert "test case 0: PASS" in passed.stdout and "test case 1: PASS" in passed.stdout
    assert "Test_result: PASS (2 test case(s))" in passed.stdout
    failed = cli("run", bad, cwd=tmp_path)
    assert failed.returncode == 1
    assert "test case 0: PASS" in failed.stdout and "test case 1: FAIL" in failed.stdout
    assert "output 0: max |error| 0.5," in failed.stdout
    assert "Test_result: FAIL (1 of 2 test case(s) failed)" in failed.stdout


def test_bundle_round_trips(smallcnn, bundles) -> None:
    good, _ = bundles
    read = BundledProgram.load(good)
    assert read.program == smallcnn.pte.read_bytes()
    cases = read.suite("forward").test_cases
    assert len(cases) == 2
    np.testing.assert_array_equal(cases[0].inputs[0], smallcnn.inputs[0].numpy())
    import torch

    with torch.no_grad():
        np.testing.assert_array_equal(cases[0].expected_outputs[0], smallcnn.model(smallcnn.inputs[0]).numpy())


def test_bundle_refuses_cases_that_do_not_fit_the_method(smallcnn) -> None:
    with pytest.raises(BundledProgramError, match="shape"):
        bundle(smallcnn.pte, [TestCase([np.zeros((1, 3, 8, 8), np.float32)])], model=smallcnn.model)
    with pytest.raises(BundledProgramError, match="no expected outputs and no model"):
        bundle(smallcnn.pte, [TestCase([smallcnn.inputs[0]])])


@pytest.mark.parametrize("damage", ["cut", "foreign"])
def test_damaged_bundle_gets_a_named_error(smallcnn, bundles, cli, tmp_path: Path, damage: str) -> None:
    good, _ = bundles
    data = good.read_bytes()[:600] if damage == "cut" else smallcnn.pte.read_bytes()
    path = tmp_path / "damaged.bpte"
    path.write_bytes(data)
    with pytest.raises(BundledProgramError, match="truncated or corrupt" if damage == "cut" else "this is a .pte"):
        BundledProgram.load(path)
    if damage == "cut":
        done = cli("run", path, cwd=tmp_path)
        assert done.returncode == 1
        assert "error: BundledProgram" in done.stderr


@needs_executorch
@pytest.mark.executorch
@pytest.mark.slow
def test_executorch_runs_kiln_bundles(bundles) -> None:
    good, bad = bundles
    passed = subprocess.run([ET_PYTHON, str(WORKER), "run-bundle", str(good), "2"], capture_output=True, text=True,
                            timeout=600)
    assert passed.returncode == 0 and "PASS" in passed.stdout, passed.stdout + passed.stderr
    failed = subprocess.run([ET_PYTHON, str(WORKER), "run-bundle", str(bad), "2"], capture_output=True, text=True,
                            timeout=600)
    assert failed.returncode == 3 and "FAIL: test case 1" in failed.stdout, failed.stdout + failed.stderr


@needs_executorch
@pytest.mark.executorch
@pytest.mark.slow
def test_kiln_runs_executorch_bundles(cli, tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32))
    made = subprocess.run([ET_PYTHON, str(WORKER), "make-bundle", str(tmp_path / "et.bpte"), str(tmp_path / "x.npy")],
                          capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr[-2000:]
    assert BundledProgram.load(tmp_path / "et.bpte").suite("forward").test_cases[0].inputs[0].shape == (1, 3, 8, 8)
    done = cli("run", "et.bpte", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Test_result: PASS (1 test case(s))" in done.stdout


def test_oplist_reads_the_program_inside_a_bundle(smallcnn, bundles, cli, tmp_path: Path) -> None:
    # The selective firmware build (kiln-deploy --bundleio --selective) lists a bundle's operators.
    good, _ = bundles
    from_bundle = cli("oplist", good, "--dtypes", cwd=tmp_path)
    from_program = cli("oplist", smallcnn.pte, "--dtypes", cwd=tmp_path)
    assert from_bundle.returncode == 0, from_bundle.stderr
    assert from_bundle.stdout == from_program.stdout and "aten::convolution.out" in from_bundle.stdout
    cut = tmp_path / "cut.bpte"
    cut.write_bytes(good.read_bytes()[:700])
    failed = cli("oplist", cut, cwd=tmp_path)
    assert failed.returncode == 1 and "bundled program: truncated or corrupt" in failed.stderr
