"""Which core-ATen nodes an XNNPACK delegate takes, and why not when it does not.

The operator set is what the Debian XNNPACK (2022 snapshot, ``libxnnpack-dev``) can
build, so that every Kiln XNNPACK program runs on Kiln's runtime as well as on
ExecuTorch's. Each check returns None (supported) or the reason the node stays on
the CPU.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Optional

import torch

from kiln.delegation.nodes import argument, shape_of
from kiln.backends.xnnpack.lowering import (
    ALIASES, AS_STRIDED, BATCH_NORM, BINARY_KINDS, FUSABLE_ACTIVATIONS, RESHAPES, UNARY_KINDS,
)
from kiln.backends.xnnpack.operands import (
    DEQUANTIZE_PER_TENSOR, QUANTIZE_PER_TENSOR, dtype_of, is_int8_per_tensor, operator_base_name,
    same_bytes_in_both_layouts,
)
from kiln.passes.as_strided import reshape_objection

Check = Callable[[torch.fx.Node, frozenset], Optional[str]]

# Operators XNNPACK has but the Debian library's subgraph API lacks.
MISSING_IN_LIBRARY = {
    "aten::cat": "concatenate", "aten::permute": "transpose", "aten::transpose": "transpose",
    "aten::tanh": "tanh", "aten::gelu": "gelu", "aten::bmm": "batch matrix multiply",
    "aten::slice": "slice", "aten::exp": "exp", "aten::log": "log", "aten::rsqrt": "reciprocal square root",
}
_LIBRARY = "the Debian XNNPACK (2022) this runtime builds on"


def _is_constant(argument: Any, constant: frozenset) -> bool:
    return not isinstance(argument, torch.fx.Node) or argument in constant


def _rank(node: Any) -> int:
    shape = shape_of(node)
    return -1 if shape is None else len(shape)


def _convolution(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    source, weight, bias = node.args[:3]
    if _rank(source) != 4:
        return f"a {_rank(source) - 2}-D convolution (XNNPACK takes 2-D ones)"
    if node.args[6]:
        return "a transposed convolution"
    if weight not in constant or (bias is not None and bias not in constant):
        return "weights or bias computed at run time"
    return None


def _fully_connected(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    name = operator_base_name(node)
    if name == "aten::addmm":
        bias, source, weight = node.args[:3]
        if node.kwargs.get("beta", 1) != 1 or node.kwargs.get("alpha", 1) != 1:
            return "addmm with beta or alpha != 1"
    elif name == "aten::mm":
        (source, weight), bias = node.args[:2], None
    else:
        source, weight = node.args[:2]
        bias = node.args[2] if len(node.args) > 2 else None
    if name != "aten::linear" and _rank(source) != 2:
        return f"a matrix product of a rank-{_rank(source)} input"
    if weight not in constant or (bias is not None and bias not in constant):
        return "a matrix product with a weight computed at run time (XNNPACK takes constant weights)"
    return None


def _binary(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    if node.kwargs.get("alpha", 1) != 1:
        return "alpha != 1"
    out_shape = shape_of(node)
    tensors = [a for a in node.args[:2] if not _is_constant(a, constant)]
    if len(tensors) == 2:
        if len(out_shape) == 4 and any(_rank(a) != 4 for a in tensors):  # type: ignore[arg-type]
            return "broadcasts a lower-rank tensor against an image (NHWC inside XNNPACK changes the alignment)"
        return None
    # With a constant operand: a per-channel scale/shift (a 1x1 depthwise convolution).
    other = node.args[1] if node.args[0] is tensors[0] else node.args[0]
    if len(out_shape) != 4 or shape_of(tensors[0]) != out_shape:  # type: ignore[arg-type]
        return "a constant operand on a tensor that is not an image (XNNPACK reads only packed constants)"
    if operator_base_name(node) == "aten::div" and other is node.args[0]:
        return "divides a constant by a tensor"
    shape = shape_of(other) if isinstance(other, torch.fx.Node) else ()
    if shape and not (_numel(shape) == 1 or _is_per_channel(shape, out_shape[1])):  # type: ignore[index]
        return f"a constant operand of shape {list(shape)} (XNNPACK takes scalars or one value per channel)"
    return None


def _numel(shape: tuple[int, ...]) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


def _is_per_channel(shape: tuple[int, ...], channels: int) -> bool:
    """True if ``shape`` broadcasts against NCHW with one value per channel ([C, 1, 1], [1, C, 1, 1])."""
    padded = (1,) * (4 - len(shape)) + tuple(shape)
    return len(padded) == 4 and padded[0] == 1 and padded[1] == channels and padded[2:] == (1, 1)


def _batch_norm(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    if _rank(node.args[0]) != 4:
        return "a batch norm over a tensor that is not an image"
    if any(a is not None and not _is_constant(a, constant) for a in node.args[1:5]):
        return "batch norm statistics computed at run time"
    if any(u.target is not operator.getitem or u.args[1] != 0 for u in node.users):
        return "its saved statistics are used"
    return None


def _clamp(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    if any(isinstance(a, torch.fx.Node) for a in node.args[1:]):
        return "clamp bounds are tensors"
    return None


def _softmax(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    rank = _rank(node.args[0])
    dim = int(node.args[1]) % max(rank, 1)
    last = 1 if rank == 4 else rank - 1
    if dim != last:
        return f"softmax over dim {dim}; XNNPACK normalizes the innermost (channel) dim only"
    return None


def _max_pool(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    if _rank(node.args[0]) != 4:
        return "not a 2-D pooling"
    if argument(node, 5, "ceil_mode", False):
        return "ceil_mode=True"
    if operator_base_name(node) == "aten::max_pool2d_with_indices":
        if any(u.target is not operator.getitem or u.args[1] != 0 for u in node.users):
            return "its indices are used"
    return None


def _avg_pool(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    if _rank(node.args[0]) != 4:
        return "not a 2-D pooling"
    padding = argument(node, 3, "padding", 0)
    padded = any(int(p) for p in (padding if isinstance(padding, (list, tuple)) else [padding]))
    if argument(node, 4, "ceil_mode", False):
        return "ceil_mode=True"
    if padded and argument(node, 5, "count_include_pad", True):
        return "padding counted in the average (XNNPACK averages valid pixels only)"
    if argument(node, 6, "divisor_override", None) is not None:
        return "divisor_override"
    return None


def _global_average(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    if _rank(node.args[0]) != 4:
        return "a mean over a tensor that is not an image (XNNPACK averages H and W of NCHW tensors)"
    if operator_base_name(node) == "aten::_adaptive_avg_pool2d":
        return None if tuple(node.args[1]) == (1, 1) else "adaptive pooling to a size other than 1x1"
    dims = {int(d) % 4 for d in node.args[1]}
    return None if dims == {2, 3} else f"a mean over dims {sorted(dims)} (XNNPACK averages H and W)"


def _reshape(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    for shape in (shape_of(node.args[0]), shape_of(node)):
        if shape is not None and not same_bytes_in_both_layouts(shape):
            return f"reshapes an NHWC image {list(shape)} ({_LIBRARY} has no transpose to undo the layout)"
    return None


def _as_strided(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    """A reshape when it only restrides a row-major tensor; XNNPACK has no strided gather."""
    reason = reshape_objection(node)
    if reason is not None:
        return f"{reason} (XNNPACK has no strided gather; the CPU's as_strided_copy kernel runs it)"
    return _reshape(node, constant)


def _alias(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    if dtype_of(node) != dtype_of(node.args[0]):
        return "converts the dtype"
    return None


def _none(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    return None


def _quantize(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    return None if is_int8_per_tensor(node, QUANTIZE_PER_TENSOR) else "not a per-tensor int8 quantize"


def _dequantize(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    return None if is_int8_per_tensor(node, DEQUANTIZE_PER_TENSOR) else "not a per-tensor int8 dequantize"


CHECKS: dict[str, Check] = {
    "aten::convolution": _convolution, "aten::addmm": _fully_connected, "aten::mm": _fully_connected,
    "aten::linear": _fully_connected, "aten::max_pool2d_with_indices": _max_pool, "aten::max_pool2d": _max_pool,
    "aten::avg_pool2d": _avg_pool, "aten::mean": _global_average, "aten::_adaptive_avg_pool2d": _global_average,
    "aten::_softmax": _softmax, "aten::softmax": _softmax, "aten::constant_pad_nd": _none,
    BATCH_NORM: _batch_norm,
    QUANTIZE_PER_TENSOR: _quantize, DEQUANTIZE_PER_TENSOR: _dequantize,
    **{name: _binary for name in BINARY_KINDS}, **{name: _none for name in UNARY_KINDS},
    **{name: _clamp for name in FUSABLE_ACTIVATIONS}, **{name: _reshape for name in RESHAPES},
    **{name: _alias for name in ALIASES}, AS_STRIDED: _as_strided,
}


def _dtype_objection(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    for source in node.all_input_nodes:
        if source not in constant and dtype_of(source) not in (torch.float32, torch.int8, None):
            return f"input '{source.name}' is {dtype_of(source)} (XNNPACK delegates take fp32 and int8)"
    value = node.meta.get("val")
    values = value if isinstance(value, (tuple, list)) else [value]
    if any(isinstance(v, torch.Tensor) and v.dtype not in (torch.float32, torch.int8) for v in values[:1]):
        return f"computes {values[0].dtype} (XNNPACK delegates compute fp32 and int8)"
    return None


def objection(node: torch.fx.Node, constant: frozenset) -> Optional[str]:
    """Why ``node`` cannot run in an XNNPACK delegate, or None if it can."""
    name = operator_base_name(node)
    if node.target is operator.getitem:
        source = node.args[0]
        if isinstance(source, torch.fx.Node) and operator_base_name(source) == "aten::max_pool2d_with_indices":
            return _max_pool(source, constant)
        if isinstance(source, torch.fx.Node) and operator_base_name(source) == BATCH_NORM:
            return _batch_norm(source, constant)
        return "selects an output of an operator XNNPACK does not run"
    if name in MISSING_IN_LIBRARY:
        return f"{_LIBRARY} has no {MISSING_IN_LIBRARY[name]} operator"
    check = CHECKS.get(name)
    if check is None:
        return f"no XNNPACK node for {name}"
    return _dtype_objection(node, constant) or check(node, constant)
