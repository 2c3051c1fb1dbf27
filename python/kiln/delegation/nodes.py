"""Questions every backend's support checks and lowering ask of an FX node."""

from __future__ import annotations

from typing import Any, Optional

import torch

from kiln.passes.delegation import is_dequantize


def argument(node: torch.fx.Node, index: int, name: str, default: Any = None) -> Any:
    """An argument by position or keyword, ``default`` when absent."""
    if index < len(node.args):
        return node.args[index]
    return node.kwargs.get(name, default)


def shape_of(node: Any) -> Optional[tuple[int, ...]]:
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if isinstance(value, torch.Tensor):
        return tuple(int(s) for s in value.shape)
    return None


def quantized_dtype(node: Any) -> Optional[torch.dtype]:
    """The integer dtype a dequantize node's input has (its last argument); None for
    anything else."""
    if isinstance(node, torch.fx.Node) and is_dequantize(node):
        dtype = node.args[-1] if node.args and isinstance(node.args[-1], torch.dtype) else None
        return dtype or node.kwargs.get("dtype")
    return None
