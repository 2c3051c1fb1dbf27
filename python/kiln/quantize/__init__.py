"""``kiln.quantize``: int8 post-training quantization and QAT on torchao's PT2E flow.

The module itself is callable::

    program = kiln.quantize(model, (x,), EthosUQuantizer(spec), calibration_samples)

    prepared = kiln.quantize.prepare_qat(model, (x,), EthosUQuantizer(spec, is_qat=True))
    ...train prepared...
    program = kiln.quantize.convert(prepared)

Both return a core-ATen ``torch.export.ExportedProgram`` in PT2E reference form
(quantize/dequantize ops around float ops, int8 weights, batch norms folded) that
``kiln.export``'s later stages and the Ethos-U partitioner consume.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from kiln.passes.quantization_parameters import QuantizationScaleError
from kiln.quantize.driver import (
    CalibrationDataError,
    QuantizationError,
    calibrate,
    convert,
    prepare,
    prepare_qat,
    quantize,
)


class _CallableModule(types.ModuleType):
    """Lets ``kiln.quantize(...)`` call :func:`quantize` while ``kiln.quantize`` stays a package."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return quantize(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["CalibrationDataError", "QuantizationError", "QuantizationScaleError", "calibrate", "convert", "prepare", "prepare_qat", "quantize"]
