"""The quantized patterns (dequantize -> op -> [activation] -> quantize) the Cortex-M lowering
replaces, and what each needs from the graph: the int8 inputs, the output's qparams, and
the clamp an activation between the op and its quantize adds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
from torch.fx import Node

from kiln.backends.cortex_m.graph_edit import QParams, dequantized, only_user, quantize_qparams
from kiln.passes.activations import activation_range

aten = torch.ops.aten

# Activations the kernels apply as the output clamp of the op before them.
CLAMPS = {aten.relu.default, aten.relu_.default, aten.hardtanh.default, aten.hardtanh_.default,
          aten.clamp.default}


@dataclass(frozen=True)
class QuantizedOutput:
    """Where an op's int8 result goes: the quantize node it replaces, its qparams, and the
    [activation_min, activation_max] range (the quantized range narrowed by a fused clamp)."""

    quantize: Node
    qparams: QParams
    activation_min: int
    activation_max: int


def quantized_output(node: Node, *, fuse_clamp: bool = True) -> Optional[QuantizedOutput]:
    """The int8 quantize that ``node``'s only use leads to (through one clamp-like activation
    if ``fuse_clamp``), or None when the result is used otherwise."""
    user = only_user(node)
    low: Optional[float] = None
    high: Optional[float] = None
    if user is not None and fuse_clamp and user.op == "call_function" and user.target in CLAMPS:
        if any(not isinstance(a, (int, float, type(None))) for a in user.args[1:]):
            return None
        low, high = activation_range(user)  # type: ignore[misc]  # a CLAMPS member: never None
        user = only_user(user)
    if user is None:
        return None
    qparams = quantize_qparams(user)
    if qparams is None:
        return None
    activation_min = qparams.qmin if low is None else max(qparams.qmin, qparams.quantize(low))
    activation_max = qparams.qmax if high is None else min(qparams.qmax, qparams.quantize(high))
    return QuantizedOutput(user, qparams, activation_min, activation_max)


def int8_inputs(*args: object) -> Optional[list[tuple[Node, QParams]]]:
    """Each argument's int8 source and qparams, or None unless every one is a dequantize."""
    found = [dequantized(a) for a in args]
    return None if any(f is None for f in found) else found  # type: ignore[return-value]
