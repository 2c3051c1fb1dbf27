"""Op lowerings: one module per operator family, all registered in :data:`REGISTRY`.

Each entry pairs ``lower(ctx, node)`` (emit TOSA, bind the node's value) with
``check(node, compile_spec, constants) -> reason | None`` (can this operator, with
these shapes and attributes, go to the NPU of that target?), so the partitioner asks
the same code that will lower the node. ``constants`` holds the nodes computed from
constants only (weights and their dequantize/transposes) in graphs where constants
are placeholders; ``get_attr`` nodes count as constants without it. Checks never look
at quantize/dequantize nodes around the operator: quantization is a property of the
operator's quantized group (see :func:`kiln.backends.arm.tosa.support.group_problem`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import torch

Lower = Callable[[Any, torch.fx.Node], None]
Check = Callable[[torch.fx.Node, Any, Collection[Any]], "str | None"]


def _always(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    return None


@dataclass(frozen=True)
class OpLowering:
    name: str
    lower: Lower
    check: Check


REGISTRY: dict[Any, OpLowering] = {}


def register(*targets: Any, check: Check = _always) -> Callable[[Lower], Lower]:
    """Decorator: ``@register(aten.add.Tensor, check=...)`` on a lowering function."""

    def decorate(function: Lower) -> Lower:
        for target in targets:
            REGISTRY[target] = OpLowering(function.__name__, function, check)
        return function

    return decorate


_FAMILIES = ("conv", "linear", "elementwise", "activation", "pooling", "reshape", "concat", "pad",
             "resize", "softmax", "layer_norm", "reduce", "transpose_conv", "slicing", "gather", "logical")


def load_all() -> dict[Any, OpLowering]:
    """Imports every family module (they register themselves) and returns the registry."""
    for family in _FAMILIES:
        importlib.import_module(f"{__name__}.{family}")
    return REGISTRY
