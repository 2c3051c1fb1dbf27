"""State the program gives no initial value, as ExecuTorch 1.5.1's exporter writes it by
default (without its InitializedMutableBufferPass the mutable buffer is planned memory
with no data). ExecuTorch's runtime starts such state at zero; Kiln's runtime (Python,
kiln-run and the Cortex-M55 firmware) must do the same at every load, whatever the planned
memory held before.

ExecuTorch exports the program and runs it in one subprocess: its outputs are the
reference, and eager PyTorch with the buffer starting at zero says what they mean.
"""

from __future__ import annotations

import dataclasses
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import kiln
from kiln.runtime import Module, Runtime

from .conftest import (  # type: ignore[import-not-found]
    STALE_BYTES,
    AccumulatingDoubler,
    Call,
    ExecuTorchBatch,
    accumulating_doubler_calls,
    assert_close,
    eager_calls,
    run_in_stale_memory,
)

pytestmark = [pytest.mark.executorch, pytest.mark.slow]

CALLS = accumulating_doubler_calls()
X = CALLS[0].inputs[0]
# kiln-run repeats one input: its runs are the call sequences [X] and [X, X].
KILN_RUN_ITERATIONS = (1, 2)


@dataclass
class Reference:
    program: Path  # ExecuTorch's .pte, no initial value for the state
    loads: list[list[Any]]  # ExecuTorch's outputs of CALLS, on two loads of the program
    repeated: dict[int, list[Any]]  # ExecuTorch's outputs of X repeated n times


@pytest.fixture(scope="module")
def reference(executorch_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Reference:
    batch = ExecuTorchBatch(executorch_python, tmp_path_factory.mktemp("state"))
    exported = torch.export.export(AccumulatingDoubler(), (X,), strict=False)
    program = batch.add_export("no_initial_value", {"forward": exported}, initial_values=False)
    loads = [batch.add_run(f"load_{k}", program, CALLS) for k in range(2)]
    repeated = {n: batch.add_run(f"repeated_{n}", program, [Call("forward", (X,))] * n) for n in KILN_RUN_ITERATIONS}
    batch.execute()
    return Reference(
        program,
        [ExecuTorchBatch.results(out) for out in loads],
        {n: ExecuTorchBatch.results(out) for n, out in repeated.items()},
    )


def _assert_same_calls(got: list[Any], want: list[Any], who: str) -> None:
    assert len(got) == len(want)
    for k, (outputs, expected) in enumerate(zip(got, want)):
        assert not isinstance(expected, str), f"ExecuTorch failed on call {k}: {expected}"
        assert_close(outputs[0], expected[0], f"{who}, call {k}")


def test_executorch_stores_no_initial_value_and_starts_at_zero(reference: Reference) -> None:
    """The premise: the program has no initial value, and ExecuTorch's outputs are eager
    PyTorch's with the buffer starting at zero ([2, 4, 6] then [3, 5, 7])."""
    (state,) = kiln.Program.load(reference.program).methods[0].states
    assert not state.has_initial_value
    zero_start = AccumulatingDoubler()
    zero_start.total.zero_()
    want = eager_calls({"forward": zero_start}, CALLS)
    for load, outputs in enumerate(reference.loads):
        _assert_same_calls(outputs, want, f"ExecuTorch, load {load}")


@pytest.mark.parametrize("stale", STALE_BYTES)
def test_kiln_runtime_matches_executorch_at_every_load(reference: Reference, stale: int) -> None:
    for load, want in enumerate(reference.loads):
        got = run_in_stale_memory(reference.program, CALLS, stale)
        _assert_same_calls(got, want, f"Kiln, planned memory {stale:#04x}, load {load}")


def test_module_reset_starts_the_state_at_zero_again(reference: Reference) -> None:
    module = Module(reference.program)
    for load, want in enumerate(reference.loads):
        if load:
            module.reset()
        _assert_same_calls([module.forward(*call.inputs) for call in CALLS], want, f"Module, load {load}")


def test_meta_and_summary_say_which_state_has_no_initial_value(reference: Reference) -> None:
    (state,) = Runtime.get().load_program(reference.program).method_meta("forward").states
    assert (state.shape, state.scalar_type, state.nbytes, state.has_initial_value) == ((3,), "Float", 12, False)
    summary = kiln.Program.load(reference.program).summary()
    assert f"value {state.value_index}: float32[3], 12 bytes, no initial value: starts at zero" in summary


@pytest.mark.parametrize("stale", [0x41, 0xFF])
@pytest.mark.parametrize("iterations", KILN_RUN_ITERATIONS)
def test_kiln_run_matches_executorch(
    kiln_run: list[str], reference: Reference, tmp_path: Path, iterations: int, stale: int
) -> None:
    np.save(tmp_path / "x.npy", X.numpy())
    result = subprocess.run(
        [*kiln_run, reference.program, "--input", tmp_path / "x.npy", "--iterations", str(iterations),
         "--fill-planned", str(stale), "--output-dir", tmp_path / "out"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Float [3], 12 bytes, no initial value in the program: starts at zero" in result.stdout
    want = reference.repeated[iterations]
    assert not isinstance(want[-1], str), f"ExecuTorch failed: {want[-1]}"
    assert_close(torch.from_numpy(np.load(tmp_path / "out" / "output_0.npy")), want[-1][0], "kiln-run")


def test_firmware_matches_executorch_in_stale_memory(reference: Reference, tmp_path: Path) -> None:
    """The firmware (Cortex-M55 in QEMU) fills its planned buffers with 0x41 (12.06 as a
    float) before the method loads (QEMU's RAM starts at zero, a device's need not), then
    runs both calls as the test cases of a bundled program whose expected outputs are
    ExecuTorch's."""
    from kiln.deploy.firmware import build_firmware, locate_sources
    from kiln.deploy.prepare import PreparedProgram
    from kiln.deploy.qemu import run_firmware
    from kiln.devtools import TestCase, bundle
    from kiln.memory.manifest import manifest_paths, write_manifest

    want = reference.loads[0]
    assert not any(isinstance(outputs, str) for outputs in want), want
    cases = [TestCase([call.inputs[0].numpy()], [np.asarray(outputs[0])]) for call, outputs in zip(CALLS, want)]
    bundled = bundle(reference.program, cases).save(tmp_path / "state.bpte")
    # The manifest describes the program inside the bundle (the runner checks its size).
    manifest = write_manifest(reference.program, tmp_path, inputs=[X.numpy()])
    json_path, header_path = manifest_paths(reference.program, tmp_path)
    prepared = PreparedProgram("state", bundled, manifest, json_path, header_path, [], [])
    elf = build_firmware(prepared, tmp_path / "firmware", locate_sources(), tmp_path / "build.log", selective=True,
                         cmake_args=["-DKILN_FIRMWARE_FILL_PLANNED=65", "-DKILN_FIRMWARE_BUNDLE_RTOL=1e-6",
                                     "-DKILN_FIRMWARE_BUNDLE_ATOL=1e-6"])
    run = run_firmware(elf, timeout=300)
    assert "planned buffers filled with 0x41" in run.output, run.output[-3000:]
    assert run.exit_code == 0 and "Test_result: PASS (2 test case(s))" in run.output, run.output[-3000:]
