"""16-bit lookup tables (TOSA 1.0 TABLE with int16 input: 513 entries, interpolated).

A pointwise function of one 16-bit tensor (sigmoid, tanh, GELU, hardswish) quantized a16w8
becomes one int16 TABLE. Every one of the 65536 input codes goes through the delegate:

* the virtual NPU (ethos-u55-128, ethos-u85-256) gives bit for bit what the TOSA reference
  model gives (Vela compiles the TABLE and the RESCALE after it into the NPU's 16-bit
  lookup);
* the reference's result is within a few output steps of eager PyTorch's function of the
  dequantized input (what a line over 128 input codes misses of the curve; FUNCTIONS).
"""

from __future__ import annotations

import logging
from typing import Any, Callable

import numpy as np
import pytest
import torch

import kiln
from kiln import _runtime
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
from kiln.backends.arm.partitioner import EthosUPartitioner

TARGETS = ["ethos-u55-128", "ethos-u85-256"]
# name -> (function, largest distance to eager PyTorch in output steps). A line over 128
# input codes (0.05 here: inputs of about +-13) misses a curve by its curvature times 0.05^2 / 8,
# halved by the table's bias: under a step for sigmoid and GELU, 4.5 steps for tanh (its
# curvature reaches 0.77 and its output step is 1/32767), and across hardswish's kinks
# (x = -3, 3) the line cuts the corner (measured 5.2 and 6.0; an int8 step is 256 of these).
FUNCTIONS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], float]] = {
    "sigmoid": (torch.sigmoid, 1.5),
    "tanh": (torch.tanh, 6.0),
    "gelu": (torch.nn.functional.gelu, 1.5),
    "hardswish": (torch.nn.functional.hardswish, 8.0),
}
_SHAPE = (1, 64, 1024)  # 65536 values: every int16 code once


class Pointwise(torch.nn.Module):
    def __init__(self, function: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.function = function

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.function(x)


@pytest.fixture(scope="module")
def quantized() -> Any:
    logging.getLogger("torchao").setLevel(logging.ERROR)
    cache: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in cache:
            generator = torch.Generator().manual_seed(0)
            calibration = [(torch.randn(_SHAPE, generator=generator) * 3,) for _ in range(2)]
            quantizer = EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"), activations="int16")
            model = Pointwise(FUNCTIONS[name][0]).eval()
            cache[name] = (model, kiln.quantize(model, calibration[0], quantizer, calibration, progress=False),
                           quantizer)
        return cache[name]

    return get


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_16_bit_table_is_bit_exact_and_close_to_eager(quantized: Any, name: str, target: str) -> None:
    model, program, quantizer = quantized(name)
    assert not quantizer.kept_int8, [str(k) for k in quantizer.kept_int8]
    delegated = kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    (delegate,) = delegated.compile_report.delegates
    tosa = delegate.preprocessed.tosa
    assert tosa.op_counts.get("TABLE") == 1, tosa.op_counts
    (source,), (result,) = tosa.inputs, tosa.outputs
    assert source.dtype == result.dtype == "int16" and source.zero_point == 0

    codes = np.arange(-32768, 32768, dtype=np.int16).reshape(_SHAPE)
    npu = np.zeros(result.shape, np.int16)
    _runtime.ethos_u_run_payload(delegate.preprocessed.blob,
                                 [(k, bytes(v)) for k, v in delegate.preprocessed.compile_specs], [codes], [npu])
    (reference,) = tosa.run_reference([codes])
    mismatched = int(np.count_nonzero(npu != reference))
    assert mismatched == 0, f"{mismatched} of 65536 codes differ from the TOSA reference on {target}"

    # Eager PyTorch on the dequantized codes, quantized to the output's range (the table's
    # input codes reach beyond the calibrated range, where the output saturates).
    eager = model(torch.from_numpy(codes.astype(np.float32)) * source.scale).numpy().astype(np.float64)
    expected = np.clip(eager / result.scale, -32767, 32767)
    steps = np.abs(reference.astype(np.float64) - expected)
    assert steps.max() <= FUNCTIONS[name][1], f"{name}: {steps.max():.2f} output steps from eager PyTorch"
    assert steps.mean() <= 0.6
