"""Ethos-U quantizer (torchao PT2E) and its quantization configurations."""

from kiln.delegation.quantizer.config import (
    QuantizationConfig,
    fixed_output_spec,
    get_a16w8_quantization_config,
    get_symmetric_quantization_config,
)
from kiln.backends.arm.quantizer.quantizer import EthosUQuantizer

__all__ = [
    "EthosUQuantizer",
    "QuantizationConfig",
    "fixed_output_spec",
    "get_a16w8_quantization_config",
    "get_symmetric_quantization_config",
]
