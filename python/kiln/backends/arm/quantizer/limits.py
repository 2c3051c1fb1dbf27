"""What keeps an all-a16w8 model's error from dropping further: the report's explanation.

16-bit activations remove most of int8's activation rounding; what is left comes from

* the int8 weights, which a16w8 keeps: the model's error with its weights rounded to int8
  per output channel and everything else in fp32 (:func:`int8_weights_error`) is a floor no
  activation precision goes below;
* the operators that kept int8 activations (EthosUQuantizer.kept_int8: softmax, layer norm,
  products of two computed tensors, steep tables ...), each a point where the 16-bit
  activations are rounded to 8 bits again.

:func:`what_limits_a16w8` names them, largest first, for a model whose a16w8 error is above
a quarter of its int8 error.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any, Sequence

import numpy as np
import torch

_WEIGHTED = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Linear, torch.nn.ConvTranspose1d,
             torch.nn.ConvTranspose2d, torch.nn.GRU, torch.nn.LSTM, torch.nn.RNN, torch.nn.MultiheadAttention)


def _round_rows_to_int8(weight: torch.Tensor, axis: int = 0) -> None:
    """Symmetric int8 per slice along ``axis`` ([-127, 127], scale max|w| / 127), as the
    quantizer's per-channel weight observer does, kept in float."""
    moved = weight.movedim(axis, 0)
    flat = moved.reshape(moved.shape[0], -1)
    scale = (flat.abs().amax(dim=1).clamp(min=2.0**-16) / 127).reshape(-1, *[1] * (moved.dim() - 1))
    moved.copy_(torch.clamp(torch.round(moved / scale), -127, 127) * scale)


def int8_weights_model(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` whose convolution, linear, recurrent and attention weights are
    rounded to int8 per output channel and kept float (biases and activations stay fp32)."""
    rounded = copy.deepcopy(model).eval()
    with torch.no_grad():
        for module in rounded.modules():
            if not isinstance(module, _WEIGHTED):
                continue
            for name, parameter in module.named_parameters(recurse=False):
                if not name.startswith(("weight", "in_proj_weight")) or parameter.dim() < 2:
                    continue
                axis = 1 if isinstance(module, (torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d)) else 0
                _round_rows_to_int8(parameter.data, axis)
    return rounded


def int8_weights_error(model: torch.nn.Module, samples: Sequence[tuple[Any, ...]],
                       reference: Sequence[Sequence[np.ndarray]]) -> float:
    """Relative RMS error against ``reference`` (fp32 outputs) of ``model`` with int8 weights
    and fp32 activations."""
    from kiln.backends.arm.quantizer.choice import outputs_of, relative_error

    return relative_error(reference, outputs_of(int8_weights_model(model), samples))


def what_limits_a16w8(int8_error: float, a16w8_error: float, weights_error: float,
                      kept_int8: Sequence[Any]) -> list[str]:
    """One line per limit of the all-a16w8 error (empty when it is at most a quarter of the
    int8 error): the int8 weights' own error, and the operators kept int8 by kind."""
    if int8_error <= 0 or a16w8_error <= int8_error / 4:
        return []
    lines = [f"a16w8 error {a16w8_error:.2e} is {a16w8_error / int8_error:.2f} of int8's ({int8_error:.2e})"]
    share = weights_error / a16w8_error if a16w8_error > 0 else 0.0
    verdict = ("the int8 weights set the floor" if share >= 0.8 else
               "the int8 weights account for part of it" if share >= 0.2 else "the int8 weights are not the limit")
    lines.append(f"int8 weights with fp32 activations: error {weights_error:.2e} ({share:.0%} of a16w8's): {verdict}")
    kinds = Counter((kept.operator, kept.reason) for kept in kept_int8)
    for (operator, reason), count in kinds.most_common():
        lines.append(f"{operator} x{count} kept int8 activations: {reason}")
    return lines
