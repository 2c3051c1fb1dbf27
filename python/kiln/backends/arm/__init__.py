"""Arm Ethos-U backend: compile spec, quantizer, partitioner, TOSA lowering, Vela.

Importing this package is cheap (no torch): the quantizer is resolved on first use.
"""

from __future__ import annotations

from kiln._lazy import lazy_attributes
from kiln.backends.arm.compile_spec import (
    CompileSpecError,
    EthosUCompileSpec,
    TargetError,
    TARGETS,
)

_LAZY_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "EthosUQuantizer": ("kiln.backends.arm.quantizer", "EthosUQuantizer"),
    "QuantizationConfig": ("kiln.backends.arm.quantizer", "QuantizationConfig"),
    "EthosUPartitioner": ("kiln.backends.arm.partitioner", "EthosUPartitioner"),
    "EthosUBackend": ("kiln.backends.arm.backend", "EthosUBackend"),
    "VelaError": ("kiln.backends.arm.vela", "VelaError"),
    # Per-layer numerics: fp32, int8 PyTorch, the TOSA reference and the virtual NPU side by side.
    "compare_layers": ("kiln.backends.arm.per_layer", "compare_layers"),
    "LayerComparison": ("kiln.backends.arm.per_layer", "LayerComparison"),
}


__getattr__ = lazy_attributes("kiln.backends.arm", _LAZY_ATTRIBUTES)


__all__ = [
    "CompileSpecError",
    "EthosUBackend",
    "EthosUCompileSpec",
    "EthosUPartitioner",
    "EthosUQuantizer",
    "LayerComparison",
    "QuantizationConfig",
    "TARGETS",
    "TargetError",
    "VelaError",
    "compare_layers",
]
