"""Values computed from constants only, folded while lowering.

A subgraph may compute tensors that depend on no input: a GRU's zero initial state
(``full``), the index arithmetic of an upsampling (``arange``, ``mul``, ``_to_copy``), a fully
connected layer of that zero state. The lowering evaluates them once with PyTorch on the
constants' values - the arithmetic the quantized model does - and binds the result as a
constant; an operator that takes such a constant where it expects an activation gets it
as a TOSA constant tensor (``LoweringContext.qtensor``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kiln.backends.arm.tosa.values import ConstTensor
from kiln.passes.constant_values import CREATION_OPERATORS, operator_name

aten = torch.ops.aten

# Lowerings that keep a constant's quantization (per-channel weight scales) when they move
# it: a constant going through them is not folded.
_QUANTIZATION_PRESERVING = {"lower_view", "lower_permute", "lower_identity", "lower_expand"}


def torch_value(value: ConstTensor) -> torch.Tensor:
    """The tensor the quantized model computes with: dequantized if quantized, else as stored."""
    return torch.from_numpy(np.ascontiguousarray(value.dequantized() if value.is_quantized else value.data))


def is_foldable(node: torch.fx.Node, values: dict[torch.fx.Node, Any], lowering_name: str) -> bool:
    """True if ``node`` computes a tensor from constants only and no lowering needs to keep
    its inputs' quantization."""
    inputs = node.all_input_nodes
    if not inputs:
        return operator_name(node.target) in CREATION_OPERATORS
    constants = [values.get(source) for source in inputs]
    if not all(isinstance(value, ConstTensor) for value in constants):
        return False
    return lowering_name not in _QUANTIZATION_PRESERVING or not any(value.is_quantized for value in constants)


def fold(node: torch.fx.Node, values: dict[torch.fx.Node, Any]) -> ConstTensor | list[ConstTensor] | None:
    """``node`` evaluated on its constant inputs: a constant, a list of them (a split), or None
    if it gives something else."""
    args, kwargs = torch.fx.map_arg((node.args, node.kwargs), lambda source: torch_value(values[source]))
    result = node.target(*args, **kwargs)
    if isinstance(result, torch.Tensor):
        return ConstTensor(result.detach().contiguous().numpy())
    if isinstance(result, (list, tuple)) and all(isinstance(r, torch.Tensor) for r in result):
        return [ConstTensor(r.detach().contiguous().numpy()) for r in result]
    return None
