"""Bad programs and bad inputs give a named KilnRuntimeError, never a crash."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from kiln.runtime import KilnRuntimeError, Runtime

# Codes from runtime/core/error.h: stable, so they are part of the contract.
EXPECTED_CODES = {
    "AccessFailed": 0x22,
    "NotFound": 0x20,
    "ProgramTruncated": 0x40,
    "ProgramBadIdentifier": 0x41,
    "InputShapeMismatch": 0x50,
    "InputDtypeMismatch": 0x51,
    "InputCountMismatch": 0x52,
}


def _assert_names(error: KilnRuntimeError, name: str) -> None:
    assert isinstance(error, RuntimeError)
    assert error.error_name == name
    assert error.error_code == EXPECTED_CODES[name]
    assert str(error).startswith(f"{name} (0x{EXPECTED_CODES[name]:02x}): ")
    # The runtime said why: its last log message is part of the text.
    assert error.log and error.log[-1] in str(error)


def _load_bytes(data: bytes) -> None:
    Runtime.get().load_program(data)


def test_truncated_file(exported, tmp_path: Path) -> None:
    data = exported("add").path.read_bytes()
    truncated = tmp_path / "truncated.pte"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(KilnRuntimeError) as caught:
        Runtime.get().load_program(truncated)
    _assert_names(caught.value, "ProgramTruncated")


@pytest.mark.parametrize("length", [0, 3, 20, 40])
def test_file_shorter_than_its_header(exported, length: int) -> None:
    data = exported("add").path.read_bytes()
    with pytest.raises(KilnRuntimeError) as caught:
        _load_bytes(data[:length])
    _assert_names(caught.value, "ProgramTruncated")


def test_wrong_identifier(exported) -> None:
    data = bytearray(exported("add").path.read_bytes())
    assert data[4:8] == b"ET12"
    data[4:8] = b"ET99"
    with pytest.raises(KilnRuntimeError) as caught:
        _load_bytes(bytes(data))
    _assert_names(caught.value, "ProgramBadIdentifier")
    assert "ET99" in str(caught.value) or "ET12" in str(caught.value)


def test_garbage_bytes() -> None:
    data = random.Random(1234).randbytes(4096)
    with pytest.raises(KilnRuntimeError) as caught:
        _load_bytes(data)
    _assert_names(caught.value, "ProgramBadIdentifier")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(KilnRuntimeError) as caught:
        Runtime.get().load_program(tmp_path / "missing.pte")
    _assert_names(caught.value, "AccessFailed")
    assert "missing.pte" in str(caught.value)


@pytest.fixture
def add_method(exported):
    program = exported("add")
    return program, Runtime.get().load_program(program.path).load_method()


def test_wrong_input_shape(add_method) -> None:
    program, method = add_method
    x, y = program.inputs
    with pytest.raises(KilnRuntimeError) as caught:
        method.execute([x, y[..., :-1]])
    _assert_names(caught.value, "InputShapeMismatch")
    assert "input 1" in str(caught.value)


def test_wrong_input_dtype(add_method) -> None:
    program, method = add_method
    x, y = program.inputs
    with pytest.raises(KilnRuntimeError) as caught:
        method.execute([x.double(), y])
    _assert_names(caught.value, "InputDtypeMismatch")


def test_input_dtype_without_a_scalar_type(add_method) -> None:
    # complex64 has no kiln::ScalarType: refused before it reaches the method.
    program, method = add_method
    inputs = [x.numpy().astype(np.complex64) for x in program.inputs]
    with pytest.raises(KilnRuntimeError) as caught:
        method.execute(inputs)
    _assert_names(caught.value, "InputDtypeMismatch")


@pytest.mark.parametrize("count", [0, 1, 3])
def test_wrong_input_count(add_method, count: int) -> None:
    program, method = add_method
    x = program.inputs[0]
    with pytest.raises(KilnRuntimeError) as caught:
        method.execute([x] * count)
    _assert_names(caught.value, "InputCountMismatch")
    assert f"{count} input(s) given" in str(caught.value)


def test_method_still_works_after_a_rejected_input(add_method) -> None:
    program, method = add_method
    with pytest.raises(KilnRuntimeError):
        method.execute([torch.zeros(3)] * 2)
    (got,) = method.execute(list(program.inputs))
    torch.testing.assert_close(got, program.eager()[0], rtol=1e-5, atol=1e-6)


CORRUPTION_SCRIPT = textwrap.dedent(
    """
    import random, sys
    from kiln.runtime import KilnRuntimeError, Runtime
    import numpy as np
    data = open(sys.argv[1], "rb").read()
    rng = random.Random(int(sys.argv[2]))
    inputs = [np.zeros((1, 3, 8, 8), np.float32)] * 2
    outcomes = {}
    for trial in range(int(sys.argv[3])):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        try:
            Runtime.get().load_program(bytes(mutated)).load_method().execute(inputs)
            outcome = "ran"
        except KilnRuntimeError as error:
            outcome = error.error_name
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print(outcomes)
    """
)


def test_corrupted_programs_never_crash(exported, tmp_path: Path) -> None:
    """Random byte changes: each program either runs or fails with a named error. A
    crash (segfault, abort) would end the child process with a signal."""
    script = tmp_path / "corrupt.py"
    script.write_text(CORRUPTION_SCRIPT)
    result = subprocess.run(
        [sys.executable, str(script), str(exported("add").path), "42", "300"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "{" in result.stdout
