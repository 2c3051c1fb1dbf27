"""XNNPACK backend: Kiln's export path to ExecuTorch's XNNPACK delegate payload.

``XnnpackPartitioner`` picks what XNNPACK runs (fp32 and int8), ``XnnpackQuantizer``
makes int8 programs for it, ``XnnpackBackend.preprocess`` writes the payload (XNNGraph
flatbuffer + constants) that ExecuTorch's ``XnnpackBackend`` and Kiln's read.

Importing this package is cheap: each class is imported on first use.
"""

from __future__ import annotations

from kiln._lazy import lazy_attributes

_LAZY_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "XnnpackPartitioner": ("kiln.backends.xnnpack.partitioner", "XnnpackPartitioner"),
    "XnnpackQuantizer": ("kiln.backends.xnnpack.quantizer", "XnnpackQuantizer"),
    "XnnpackBackend": ("kiln.backends.xnnpack.backend", "XnnpackBackend"),
    "XnnpackLoweringError": ("kiln.backends.xnnpack.lowering", "XnnpackLoweringError"),
}


__getattr__ = lazy_attributes("kiln.backends.xnnpack", _LAZY_ATTRIBUTES)


__all__ = ["XnnpackBackend", "XnnpackLoweringError", "XnnpackPartitioner", "XnnpackQuantizer"]
