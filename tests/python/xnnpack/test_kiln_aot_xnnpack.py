"""``kiln-aot --delegate --backend xnnpack``: fp32 and int8 XNNPACK programs from the command
line, run from a folder outside the checkout into folders that do not exist yet."""

from __future__ import annotations

from pathlib import Path

import pytest

import kiln
import kiln.cli.aot


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("quantize, name", [(False, "smallcnn_xnnpack.pte"), (True, "smallcnn_int8_xnnpack.pte")])
def test_aot_writes_an_xnnpack_program(capsys, quantize: bool, name: str) -> None:
    argv = ["-m", "smallcnn", "--delegate", "--backend", "xnnpack", "-o", "programs/", "--intermediates", "out"]
    assert kiln.cli.aot.main(argv + (["--quantize"] if quantize else [])) == 0
    printed = capsys.readouterr().out
    assert "result: " in printed and "delegated to XNNPACK in 1 delegate(s), 0 on the CPU" in printed
    program = kiln.Program.load(Path("programs") / name)
    assert "delegate 0: XnnpackBackend" in program.summary()
    assert Path("out/partition_report.txt").read_text().startswith("partition report for xnnpack")
    assert Path("out/xnnpack_0_delegate.bin").read_bytes()[4:8] == b"XH00"


@pytest.mark.parametrize("argv, fragment", [
    (["-m", "smallcnn", "--backend", "xnnpack"], "only with --delegate"),
    (["-m", "smallcnn", "--delegate", "--backend", "xnnpack", "-t", "ethos-u55-128"], "--target"),
    (["-m", "smallcnn", "--delegate", "--backend", "xnnpack", "--nhwc_io"], "--nhwc_io"),
])
def test_aot_xnnpack_refuses_npu_flags_in_one_line(capsys, argv: list[str], fragment: str) -> None:
    assert kiln.cli.aot.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert fragment in error and len(error.splitlines()) == 1
