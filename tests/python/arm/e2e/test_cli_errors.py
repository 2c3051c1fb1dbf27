"""User errors of kiln-aot's Ethos-U flags end in one line and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from kiln.cli.aot import main

BAD_EXPORT = '''
import torch

class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # a branch on data: torch.export cannot trace it
            return x * 2
        return x

    def get_example_inputs(self):
        return (torch.ones(1, 4),)
'''


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    status = main(argv)
    return status, capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--target", "ethos-u55-129", "--quantize"], "unknown Ethos-U target 'ethos-u55-129'"),
        (["--memory_mode", "Dedicated_Sram", "--quantize"], "memory mode 'Dedicated_Sram' is not available"),
        (["--delegate"], "--delegate needs --quantize"),
    ],
)
def test_bad_flags_end_in_one_line(capsys, tmp_path: Path, argv: list[str], message: str) -> None:
    status, err = run(capsys, ["--model_name", "add", "--output", str(tmp_path / "x.pte"), *argv])
    assert status == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
    assert "Traceback" not in err


def test_model_that_fails_torch_export_ends_in_one_line(capsys, tmp_path: Path) -> None:
    source = tmp_path / "bad_model.py"
    source.write_text(BAD_EXPORT)
    status, err = run(capsys, ["--model_name", f"{source}:DataDependent", "--quantize", "--delegate",
                               "--output", str(tmp_path / "bad.pte")])
    assert status == 2
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "torch.export failed" in lines[0], err
    assert "Traceback" not in err
