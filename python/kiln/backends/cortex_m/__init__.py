"""Cortex-M int8 flow: quantize for CMSIS-NN's arithmetic and lower to ``cortex_m::`` kernels.

Importing this package is cheap (no torch): everything is resolved on first use.
"""

from __future__ import annotations

from kiln._lazy import lazy_attributes
from kiln.targets import CORTEX_M_TARGETS, DEFAULT_CORTEX_M_TARGET, check_cortex_m_target

_LAZY_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "CortexMQuantizer": ("kiln.backends.cortex_m.quantizer", "CortexMQuantizer"),
    "get_cortex_m_quantization_config": ("kiln.backends.cortex_m.quantizer", "get_cortex_m_quantization_config"),
    "CortexMLowering": ("kiln.backends.cortex_m.pipeline", "CortexMLowering"),
    "CortexMReport": ("kiln.backends.cortex_m.pipeline", "CortexMReport"),
    "to_cortex_m": ("kiln.backends.cortex_m.pipeline", "to_cortex_m"),
}


__getattr__ = lazy_attributes("kiln.backends.cortex_m", _LAZY_ATTRIBUTES)


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
