"""What every backend's PT2E quantizer shares: module-scoped configs (:class:`ModuleScopedQuantizer`),
the annotation rules (:mod:`.annotator`, :mod:`.patterns`), the quantization configs
(:mod:`.config`) and the rewrites before annotation (recurrent layers, GLU, attention)."""

from kiln.delegation.quantizer.base import ModuleScopedQuantizer
from kiln.delegation.quantizer.config import (
    QuantizationConfig,
    fixed_output_spec,
    get_symmetric_quantization_config,
)

__all__ = [
    "ModuleScopedQuantizer",
    "QuantizationConfig",
    "fixed_output_spec",
    "get_symmetric_quantization_config",
]
