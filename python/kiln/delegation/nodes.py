"""Questions every backend's support checks and lowering ask of an FX node."""

from __future__ import annotations

from typing import Any, Optional

import torch


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
