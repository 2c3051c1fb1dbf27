"""Cortex-M int8 flow: quantize for CMSIS-NN's arithmetic and lower to ``cortex_m::`` kernels.

Importing this package is cheap (no torch): everything is resolved on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from kiln.backends.arm.compile_spec import CORTEX_M_TARGETS, DEFAULT_CORTEX_M_TARGET, check_cortex_m_target

_LAZY_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "CortexMQuantizer": ("kiln.backends.cortex_m.quantizer", "CortexMQuantizer"),
    "get_cortex_m_quantization_config": ("kiln.backends.cortex_m.quantizer", "get_cortex_m_quantization_config"),
    "CortexMLowering": ("kiln.backends.cortex_m.pipeline", "CortexMLowering"),
    "CortexMReport": ("kiln.backends.cortex_m.pipeline", "CortexMReport"),
    "to_cortex_m": ("kiln.backends.cortex_m.pipeline", "to_cortex_m"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY_ATTRIBUTES:
        raise AttributeError(f"module 'kiln.backends.cortex_m' has no attribute {name!r}")
    module_name, attribute = _LAZY_ATTRIBUTES[name]
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value


__all__ = [
    "CORTEX_M_TARGETS",
    "DEFAULT_CORTEX_M_TARGET",
    "CortexMLowering",
    "CortexMQuantizer",
    "CortexMReport",
    "check_cortex_m_target",
    "get_cortex_m_quantization_config",
    "to_cortex_m",
]
