"""XNNPACK backend: Kiln's export path to ExecuTorch's XNNPACK delegate payload.

``XnnpackPartitioner`` picks what XNNPACK runs (fp32 and int8), ``XnnpackQuantizer``
makes int8 programs for it, ``XnnpackBackend.preprocess`` writes the payload (XNNGraph
flatbuffer + constants) that ExecuTorch's ``XnnpackBackend`` and Kiln's read.

Importing this package is cheap: each class is imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "XnnpackPartitioner": ("kiln.backends.xnnpack.partitioner", "XnnpackPartitioner"),
    "XnnpackQuantizer": ("kiln.backends.xnnpack.quantizer", "XnnpackQuantizer"),
    "XnnpackBackend": ("kiln.backends.xnnpack.backend", "XnnpackBackend"),
    "XnnpackLoweringError": ("kiln.backends.xnnpack.lowering", "XnnpackLoweringError"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY_ATTRIBUTES:
        raise AttributeError(f"module 'kiln.backends.xnnpack' has no attribute {name!r}")
    module_name, attribute = _LAZY_ATTRIBUTES[name]
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value


__all__ = ["XnnpackBackend", "XnnpackLoweringError", "XnnpackPartitioner", "XnnpackQuantizer"]
