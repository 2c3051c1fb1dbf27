"""kiln-run (the installed C++ host runner): outputs, summary, exit codes."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _run(command: list[str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, *map(str, args)], capture_output=True, text=True, timeout=120
    )


def _save_inputs(inputs: tuple[torch.Tensor, ...], directory: Path) -> list[str]:
    flags: list[str] = []
    for i, tensor in enumerate(inputs):
        path = directory / f"input_{i}.npy"
        np.save(path, tensor.numpy())
        flags += ["--input", str(path)]
    return flags


@pytest.mark.parametrize("name", ["add", "softmax", "elementwise"])
def test_output_matches_eager(kiln_run, exported, tmp_path: Path, name: str) -> None:
    program = exported(name)
    flags = _save_inputs(program.inputs, tmp_path)
    result = _run(kiln_run, program.path, *flags, "--output-dir", tmp_path, "--iterations", "3")
    assert result.returncode == EXIT_OK, result.stderr
    got = np.load(tmp_path / "output_0.npy")
    np.testing.assert_allclose(got, program.eager()[0].numpy(), rtol=1e-5, atol=1e-6)
    for line in ("load:", "execute: 3 iteration(s)", "planned memory:", "method allocator:",
                 "temp allocator:"):
        assert line in result.stdout


def test_generated_inputs_are_the_documented_sawtooth(kiln_run, exported, tmp_path: Path) -> None:
    program = exported("elementwise")
    result = _run(kiln_run, program.path, "--output-dir", tmp_path)
    assert result.returncode == EXIT_OK, result.stderr
    assert "deterministic values" in result.stdout
    # Recompute the runner's documented fill, (i % 17 - 8) / 8, on the eager model.
    inputs = [
        torch.from_numpy(((np.arange(x.numel()) % 17 - 8) / 8).astype(np.float32)).reshape(x.shape)
        for x in program.inputs
    ]
    np.testing.assert_allclose(
        np.load(tmp_path / "output_0.npy"), program.eager(*inputs)[0].numpy(), rtol=1e-5, atol=1e-6
    )


def test_profile_lists_operators(kiln_run, exported, tmp_path: Path) -> None:
    program = exported("elementwise")
    result = _run(kiln_run, program.path, "--output-dir", tmp_path, "--profile",
                  "--iterations", "2")
    assert result.returncode == EXIT_OK, result.stderr
    assert "per-operator time" in result.stdout
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()
            if line.strip().startswith("aten::")}
    # One add and one sigmoid per run, two runs.
    assert rows["aten::add.out"][1] == "2" and rows["aten::sigmoid.out"][1] == "2"


def test_bad_file_names_the_error(kiln_run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.pte"
    bad.write_bytes(b"\x00" * 64)
    result = _run(kiln_run, bad)
    assert result.returncode == EXIT_ERROR
    assert result.stderr.splitlines()[-2].startswith("error: ProgramBadIdentifier (0x41): ")


def test_truncated_file_names_the_error(kiln_run, exported, tmp_path: Path) -> None:
    data = exported("add").path.read_bytes()
    bad = tmp_path / "truncated.pte"
    bad.write_bytes(data[: len(data) // 2])
    result = _run(kiln_run, bad)
    assert result.returncode == EXIT_ERROR
    assert "error: ProgramTruncated (0x40): " in result.stderr


def test_wrong_input_shape_names_the_error(kiln_run, exported, tmp_path: Path) -> None:
    program = exported("add")
    flags = _save_inputs((program.inputs[0], program.inputs[1][..., :-1]), tmp_path)
    result = _run(kiln_run, program.path, *flags, "--output-dir", tmp_path)
    assert result.returncode == EXIT_ERROR
    assert "error: InputShapeMismatch (0x50): " in result.stderr
    assert not (tmp_path / "output_0.npy").exists()


def test_wrong_input_dtype_names_the_error(kiln_run, exported, tmp_path: Path) -> None:
    program = exported("add")
    flags = _save_inputs(tuple(x.double() for x in program.inputs), tmp_path)
    result = _run(kiln_run, program.path, *flags)
    assert result.returncode == EXIT_ERROR
    assert "error: InputDtypeMismatch (0x51): input 0" in result.stderr


def test_wrong_input_count_names_the_error(kiln_run, exported, tmp_path: Path) -> None:
    program = exported("add")
    flags = _save_inputs(program.inputs[:1], tmp_path)
    result = _run(kiln_run, program.path, *flags)
    assert result.returncode == EXIT_ERROR
    assert "error: InputCountMismatch (0x52): 1 --input file(s) given" in result.stderr


@pytest.mark.parametrize("args", [[], ["--iterations", "0"], ["x.pte", "--bogus"]])
def test_bad_command_line(kiln_run, args: list[str]) -> None:
    result = _run(kiln_run, *args)
    assert result.returncode == EXIT_USAGE
    (line,) = result.stderr.splitlines()  # one line, pointing at --help
    assert line.startswith("kiln-run: ") and "--help" in line


def test_help_prints_the_usage(kiln_run) -> None:
    result = _run(kiln_run, "--help")
    assert result.returncode == EXIT_OK
    assert result.stdout.startswith("usage: kiln-run PROGRAM.pte")


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--iterations", "18446744073709551615"),  # 2^64 - 1: was a negative count and SIGSEGV
        ("--iterations", "9223372036854775808"),  # 2^63
        ("--iterations", "18446744073709551616"),  # beyond 64 bits
        ("--iterations", "10000001"),
        ("--iterations", "-1"),
        ("--iterations", " 3"),
        ("--iterations", "3x"),
        ("--temp-bytes", "18446744073709551615"),
        ("--temp-bytes", "1099511627777"),  # 2^40 + 1
        ("--temp-bytes", "-5"),
    ],
)
def test_numeric_flags_out_of_range_are_refused(kiln_run, exported, flag: str, value: str) -> None:
    result = _run(kiln_run, exported("add").path, flag, value)
    assert result.returncode == EXIT_USAGE, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"kiln-run: {flag} needs an integer from ") and repr(value.strip())[1:-1] in line


def test_output_dir_is_created_with_its_parents(kiln_run, exported, tmp_path: Path) -> None:
    # As a user would: from a folder outside the checkout, a relative path that does not exist.
    program = exported("add")
    flags = _save_inputs(program.inputs, tmp_path)
    result = subprocess.run(
        [*kiln_run, str(program.path), *flags, "--output-dir", "out/nested/"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == EXIT_OK, result.stderr
    got = np.load(tmp_path / "out" / "nested" / "output_0.npy")
    np.testing.assert_allclose(got, program.eager()[0].numpy(), rtol=1e-5, atol=1e-6)


def test_output_dir_that_is_a_file_names_the_error(kiln_run, exported, tmp_path: Path) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a folder")
    result = _run(kiln_run, exported("add").path, "--output-dir", blocker / "out")
    assert result.returncode == EXIT_ERROR
    assert "error: AccessFailed (0x22): cannot create the output directory" in result.stderr


def _renamed(data: bytes, old: bytes, new: bytes) -> bytes:
    assert len(old) == len(new) and data.count(old) == 1, (old, data.count(old))
    return data.replace(old, new)


# An escape sequence (clear screen), a terminal title sequence and bytes that are not UTF-8.
HOSTILE = b"\x1b[2J\xff\xfe\x07"


def _assert_printable(output: bytes) -> None:
    assert b"\x1b" not in output and b"\x07" not in output
    output.decode("ascii")  # nothing but ASCII reached the terminal


def test_method_names_from_the_program_are_printed_escaped(kiln_run, exported, tmp_path: Path) -> None:
    bad = tmp_path / "hostile_method.pte"
    bad.write_bytes(_renamed(exported("add").path.read_bytes(), b"forward", HOSTILE))
    result = subprocess.run([*kiln_run, str(bad), "--output-dir", str(tmp_path)],
                            capture_output=True, timeout=120)
    assert result.returncode == EXIT_OK, result.stderr
    _assert_printable(result.stdout + result.stderr)
    assert b"method '\\x1b[2J\\xff\\xfe\\x07'" in result.stdout


def test_operator_names_in_errors_are_printed_escaped(kiln_run, exported, tmp_path: Path) -> None:
    bad = tmp_path / "hostile_operator.pte"
    bad.write_bytes(_renamed(exported("add").path.read_bytes(), b"aten::add", b"at" + HOSTILE))
    result = subprocess.run([*kiln_run, str(bad)], capture_output=True, timeout=120)
    assert result.returncode == EXIT_ERROR
    _assert_printable(result.stdout + result.stderr)
    assert b"error: OperatorMissing (0x14)" in result.stderr
    assert b"at\\x1b[2J\\xff\\xfe\\x07.out" in result.stderr


def test_corrupted_programs_exit_with_an_error_not_a_signal(kiln_run, exported, tmp_path: Path) -> None:
    data = exported("elementwise").path.read_bytes()
    rng = random.Random(5)
    names: set[str] = set()
    for trial in range(40):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        bad = tmp_path / f"corrupt_{trial}.pte"
        bad.write_bytes(bytes(mutated))
        result = _run(kiln_run, bad, "--output-dir", tmp_path)
        # A negative return code is a signal (crash); only 0 (ran) and 1 (named error) are fine.
        assert result.returncode in (EXIT_OK, EXIT_ERROR), (trial, result.returncode, result.stderr)
        if result.returncode == EXIT_ERROR:
            assert "error: " in result.stderr
            names.add(result.stderr.split("error: ")[-1].split(" ")[0])
    assert names  # some corruptions must be detected
