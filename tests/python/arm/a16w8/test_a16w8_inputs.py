"""Bad input to the a16w8 flow ends in named errors: calibration samples that do not match the
example inputs, 16-bit flags of kiln-aot without --quantize, for a backend without 16-bit
activations, or naming a submodule the model does not have."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import kiln
from kiln.backends.arm import EthosUQuantizer
from kiln.cli.aot import main
from kiln.quantize import CalibrationDataError


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


@pytest.mark.parametrize("sample, message", [
    (torch.randn(1, 5), r"calibration sample 1, input 0: torch.float32 \(1, 5\) does not match .* \(1, 4\)"),
    (torch.randn(1, 4, dtype=torch.float64), r"calibration sample 1, input 0: torch.float64"),
    ((torch.randn(1, 4), torch.randn(1, 4)), r"calibration sample 1 has 2 inputs; the model's example inputs are 1"),
])
def test_calibration_data_of_the_wrong_shape_or_dtype_is_a_named_error(sample: object, message: str) -> None:
    x = torch.randn(1, 4)
    with pytest.raises(CalibrationDataError, match=message) as error:
        kiln.quantize(Tiny().eval(), (x,), EthosUQuantizer(None, activations="int16"), [(x,), sample],
                      progress=False)
    assert error.value.sample == 1


@pytest.mark.parametrize("argv, message", [
    (["--a16w8"], "--a16w8 and --int16_layers choose the precision of --quantize"),
    (["--quantize", "--a16w8", "--int16_layers", "fc"], "give it or --int16_layers, not both"),
    (["--quantize", "--a16w8", "--target", "cortex-m55"], "are for the Ethos-U quantizer"),
    (["--quantize", "--int16_layers", "conv1x"], "no submodule 'conv1x'"),
    (["--quantize", "--auto_precision", "0.01"], "--auto_precision needs --quantize --delegate"),
    (["--quantize", "--delegate", "--auto_precision", "0.01", "--a16w8"], "leave out --a16w8"),
    (["--quantize", "--delegate", "--max_npu_cycles", "100"], "budgets of --auto_precision"),
])
def test_kiln_aot_16_bit_flags_refuse_what_they_cannot_do(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                         argv: list[str], message: str) -> None:
    status = main(["--model_name", "smallcnn", "--output", str(tmp_path / "x.pte"), *argv])
    err = capsys.readouterr().err
    assert status == 2, err
    assert message in err and len(err.strip().splitlines()) == 1, err
