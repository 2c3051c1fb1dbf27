"""Arm Ethos-U backend: compile spec, quantizer, partitioner, TOSA lowering, Vela.

Importing this package is cheap (no torch): the quantizer is resolved on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

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
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY_ATTRIBUTES:
        raise AttributeError(f"module 'kiln.backends.arm' has no attribute {name!r}")
    module_name, attribute = _LAZY_ATTRIBUTES[name]
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value


__all__ = [
    "CompileSpecError",
    "EthosUBackend",
    "EthosUCompileSpec",
    "EthosUPartitioner",
    "EthosUQuantizer",
    "QuantizationConfig",
    "TARGETS",
    "TargetError",
    "VelaError",
]
