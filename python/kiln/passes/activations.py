"""Activations PT2E leaves between an operator and its output quantize node, which the
int8 back ends (TOSA's RESCALE + CLAMP, the Cortex-M kernels' activation range) fuse."""

from __future__ import annotations

import torch


def activation_range(node: torch.fx.Node) -> tuple[float | None, float | None] | None:
    """The (low, high) float range ``node`` clamps to (None = unbounded), or None when it
    is not such an activation."""
    aten = torch.ops.aten
    if node.target in (aten.relu.default, aten.relu_.default):
        return 0.0, None
    if node.target in (aten.hardtanh.default, aten.hardtanh_.default):
        low = node.args[1] if len(node.args) > 1 else node.kwargs.get("min_val", -1.0)
        high = node.args[2] if len(node.args) > 2 else node.kwargs.get("max_val", 1.0)
        return float(low), float(high)
    if node.target in (aten.clamp.default,):
        low = node.args[1] if len(node.args) > 1 else node.kwargs.get("min")
        high = node.args[2] if len(node.args) > 2 else node.kwargs.get("max")
        return (None if low is None else float(low)), (None if high is None else float(high))
    return None
