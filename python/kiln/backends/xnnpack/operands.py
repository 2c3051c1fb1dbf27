"""Shapes, layouts and constant operands shared by the XNNPACK support checks and lowering.

Inside an XNNPACK delegate every 4-D tensor is channels-last (NHWC), the layout
XNNPACK's convolutions and pooling take; every other rank keeps PyTorch's layout.
The Debian XNNPACK (2022) has no transpose operator, so a 4-D tensor can only be
reshaped where NCHW and NHWC hold the same bytes (H x W == 1 or C == 1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

import torch

from kiln.passes.delegation import operator_name

NCHW_TO_NHWC = (0, 2, 3, 1)
NHWC_TO_NCHW = (0, 3, 1, 2)

QUANTIZE_PER_TENSOR = "quantized_decomposed::quantize_per_tensor"
DEQUANTIZE_PER_TENSOR = "quantized_decomposed::dequantize_per_tensor"
DEQUANTIZE_PER_CHANNEL = "quantized_decomposed::dequantize_per_channel"


def dtype_of(node: Any) -> Optional[torch.dtype]:
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value.dtype if isinstance(value, torch.Tensor) else None


def physical_dims(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The dims XNNPACK sees for a tensor of PyTorch shape ``shape``."""
    return tuple(shape[i] for i in NCHW_TO_NHWC) if len(shape) == 4 else tuple(shape)


def same_bytes_in_both_layouts(shape: tuple[int, ...]) -> bool:
    """True if a tensor of this shape has the same memory order in NCHW and NHWC."""
    return len(shape) != 4 or shape[2] * shape[3] == 1 or shape[1] == 1


def is_int8_per_tensor(node: Any, name: str) -> bool:
    """True if ``node`` is a per-tensor int8 quantize/dequantize (``name`` says which)."""
    return (
        isinstance(node, torch.fx.Node)
        and node.op == "call_function"
        and operator_base_name(node) == name
        and any(a is torch.int8 for a in (*node.args, *node.kwargs.values()))
    )


def qparams(node: torch.fx.Node) -> tuple[float, int]:
    """(scale, zero point) of a per-tensor quantize/dequantize node."""
    scale, zero_point = node.args[1], node.args[2]
    return float(scale), int(zero_point)


@dataclass(frozen=True)
class ConstantOperand:
    """A constant argument: its data, and for a quantized constant its scales along ``axis``
    (None: one scale for the whole tensor)."""

    data: torch.Tensor
    scales: Optional[torch.Tensor] = None
    zero_points: Optional[torch.Tensor] = None
    axis: Optional[int] = None

    @property
    def quantized(self) -> bool:
        return self.scales is not None

    def as_float(self) -> torch.Tensor:
        if not self.quantized:
            return self.data.float()
        scales, zero_points = self.scales.float(), self.zero_points.float()  # type: ignore[union-attr]
        if self.axis is not None:
            view = [1] * self.data.dim()
            view[self.axis] = -1
            scales, zero_points = scales.reshape(view), zero_points.reshape(view)
        return (self.data.float() - zero_points) * scales

    def permute(self, dims: list[int]) -> ConstantOperand:
        axis = list(dims).index(self.axis) if self.axis is not None else None
        return replace(self, data=self.data.permute(dims).contiguous(), axis=axis)

    def channel_scales(self, channels: int) -> torch.Tensor:
        """One scale per output channel (a per-tensor scale repeated)."""
        scales = self.scales.float().reshape(-1)  # type: ignore[union-attr]
        return scales.expand(channels).contiguous() if scales.numel() == 1 else scales


def constant_operand(node: Any, resolve: Any) -> Optional[ConstantOperand]:
    """The constant behind ``node`` (weights through their dequantize and transposes), or None.

    ``resolve(node)`` gives the tensor of a constant leaf (a ``get_attr`` or a constant
    placeholder) or None for a node that is not constant.
    """
    if not isinstance(node, torch.fx.Node):
        return None
    leaf = resolve(node)
    if leaf is not None:
        return ConstantOperand(leaf)
    if node.op != "call_function":
        return None
    name = operator_base_name(node)
    source = constant_operand(node.args[0], resolve) if node.args else None
    if name in (DEQUANTIZE_PER_TENSOR, DEQUANTIZE_PER_CHANNEL):
        if source is None:
            return None
        scales = _tensor_argument(node.args[1], resolve, torch.float32)
        zero_points = _tensor_argument(node.args[2], resolve, torch.int64)
        if scales is None or zero_points is None:
            return None
        axis = int(node.args[3]) if name == DEQUANTIZE_PER_CHANNEL else None
        return ConstantOperand(source.data, scales, zero_points, axis)
    if name == "aten::permute" and source is not None:
        return source.permute(list(node.args[1]))
    if name == "aten::t" and source is not None:
        return source.permute([1, 0])
    # Anything else computed from constants only: evaluate it in float now.
    arguments = []
    for argument in node.args:
        if isinstance(argument, torch.fx.Node):
            operand = constant_operand(argument, resolve)
            if operand is None:
                return None
            arguments.append(operand.as_float())
        else:
            arguments.append(argument)
    return ConstantOperand(node.target(*arguments, **node.kwargs))


def _tensor_argument(value: Any, resolve: Any, dtype: torch.dtype) -> Optional[torch.Tensor]:
    if isinstance(value, torch.fx.Node):
        return resolve(value)
    if isinstance(value, torch.Tensor):
        return value
    return torch.tensor([value], dtype=dtype)


def operator_base_name(node: torch.fx.Node) -> str:
    """``aten::add`` for ``aten::add.Tensor``: the operator without its overload."""
    return operator_name(node).split(".")[0]
