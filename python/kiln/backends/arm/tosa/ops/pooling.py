"""max_pool2d -> MAX_POOL2D; avg_pool2d / mean over H,W / adaptive avg pool -> AVG_POOL2D
(a mean over other dims is a REDUCE_SUM, reduce.py).

MAX_POOL2D keeps the input's quantization (max commutes with a monotone map).
AVG_POOL2D divides by the number of *valid* inputs, so PyTorch's default
``count_include_pad=True`` padding becomes an explicit PAD with the zero point first.
TOSA's division rounds ``sum / count`` with a 32-bit reciprocal, at the input's
quantization step. When the output step is finer (a mean's usually is), an average
without padding is a DEPTHWISE_CONV2D of ones instead: it sums each window exactly in
int32, and one RESCALE by ``input step / count`` rounds once, as PyTorch's quantize of its
float mean does. Averaging in int16 at 1/128 of the input step and rescaling after rounds
twice: about 3% of a squeeze-excite's channel means came out one step off quantized
PyTorch, and the excite layers amplify each into several steps downstream. Padded
averages (and windows too large for a depthwise kernel) keep the int16 average.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.constraints import family_constraints, pooling_objection, reduction_objection
from kiln.backends.arm.tosa.builder import attribute
from kiln.backends.arm.tosa.context import LoweringContext, pair, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.conv import emit_conv2d, spatial_pads
from kiln.backends.arm.tosa.ops.pad import emit_pad
from kiln.backends.arm.tosa.ops.reduce import check_reduction, input_bits, is_global_pool, lower_reduction
from kiln.backends.arm.tosa.ops.rescale import to_int16
from kiln.backends.arm.tosa.values import QTensor

aten = torch.ops.aten

# int8 differences (|q - zp| <= 255) times 128 still fit int16.
_INT16_HEADROOM = 128



def _pool_args(node: torch.fx.Node) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], bool]:
    kernel = pair(node.args[1])
    stride_arg = scalar_arg(node, 2, "stride", [])
    stride = pair(stride_arg) if stride_arg not in (None, [], ()) else kernel
    padding = pair(scalar_arg(node, 3, "padding", 0))
    ceil_mode = bool(scalar_arg(node, 5 if "max" in str(node.target) else 4, "ceil_mode", False))
    return kernel, stride, padding, ceil_mode


def _input_shape(node: torch.fx.Node) -> tuple[int, ...]:
    return tuple(int(d) for d in node.args[0].meta["val"].shape)


def check_pool(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if len(_input_shape(node)) != 4:
        return "only 2-D pooling on rank-4 tensors is lowered"
    kernel, stride, padding, ceil_mode = _pool_args(node)
    if "max" in str(node.target) and pair(scalar_arg(node, 4, "dilation", 1)) != (1, 1):
        return "dilated max pooling is not lowered"
    if "avg" in str(node.target) and scalar_arg(node, 6, "divisor_override", None) is not None:
        return "avg_pool2d divisor_override is not lowered"
    if ceil_mode:
        _, _, h, w = _input_shape(node)
        floor_shape = [(size + 2 * p - k) // s + 1 for size, p, k, s in zip((h, w), padding, kernel, stride)]
        if list(node.meta["val"].shape[2:]) != floor_shape:
            return "ceil_mode changes the output size; not lowered"
    return pooling_objection(compile_spec, "max" if "max" in str(node.target) else "avg", kernel, stride, padding)


def _out_shape(x: QTensor, kernel: tuple[int, int], stride: tuple[int, int], pads: list[int]) -> tuple[int, ...]:
    n, h, w, c = x.tosa_shape
    return (n, (h + pads[0] + pads[1] - kernel[0]) // stride[0] + 1,
            (w + pads[2] + pads[3] - kernel[1]) // stride[1] + 1, c)


@register(aten.max_pool2d_with_indices.default, aten.max_pool2d.default, check=check_pool)
def lower_max_pool(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_pool(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    x = ctx.qtensor(node.args[0], node)
    kernel, stride, padding, _ = _pool_args(node)
    x, pads = spatial_pads(ctx, x, kernel, stride, (1, 1), padding, ctx.stem(node))
    shape = _out_shape(x, kernel, stride, pads)
    attr = attribute("MaxPool2d", list(kernel), list(stride), pads, ts.NanPropagationMode.PROPAGATE)
    name = ctx.builder.op(ts.Op.MAX_POOL2D, [x.name], shape, x.dtype, attr, ctx.stem(node))
    ctx.bind(node, QTensor(name, (shape[0], shape[3], shape[1], shape[2]), x.dtype, x.scale, x.zero_point))


def emit_avg_pool(ctx: LoweringContext, node: torch.fx.Node, x: QTensor, kernel: tuple[int, int],
                  stride: tuple[int, int], pads: list[int]) -> None:
    out = ctx.output_quant(node)
    stem = ctx.stem(node)
    source = x
    finer_output = x.dtype == ts.DType.INT8 and x.scale > out.scale * (1.0 + 1e-6)
    # The window summed exactly by a depthwise convolution, whose kernel Vela limits.
    if finer_output and not any(pads) and max(kernel) <= family_constraints(ctx.compile_spec).max_depthwise_kernel:
        # Exact window sums (int32), one rounding to the output (module docstring).
        channels = x.tosa_shape[3]
        ones = np.ones((kernel[0], kernel[1], channels, 1), np.int8)
        summed, shape = emit_conv2d(ctx.builder, x.name, x.tosa_shape, x.zero_point, ones,
                                    np.zeros(channels, np.int32), [0, 0, 0, 0], stride, (1, 1), True,
                                    f"{stem}_sum")
        ctx.finish(node, out, summed, shape, ts.DType.INT32, x.scale / (kernel[0] * kernel[1]))
        return
    if finer_output:
        # The average rounds to the input's step; when the output step is finer that
        # loses output precision (a mean shrinks the range, so its output scale is
        # smaller). Average in int16 at 1/128 of the input step instead.
        fine = x.scale / _INT16_HEADROOM
        source = QTensor(to_int16(ctx.builder, x, fine, f"{stem}_int16"), x.shape, ts.DType.INT16, fine, 0)
    zps = [ctx.builder.zero_point(source.zero_point, source.dtype, f"{stem}_in"),
           ctx.builder.zero_point(source.zero_point, source.dtype, f"{stem}_out")]
    shape = _out_shape(source, kernel, stride, pads)
    attr = attribute("AvgPool2d", list(kernel), list(stride), pads, ts.DType.INT32)
    pooled = ctx.builder.op(ts.Op.AVG_POOL2D, [source.name, *zps], shape, source.dtype, attr, stem)
    ctx.finish(node, out, pooled, shape, source.dtype, source.scale, source.zero_point)


@register(aten.avg_pool2d.default, check=check_pool)
def lower_avg_pool(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_pool(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    x = ctx.qtensor(node.args[0], node)
    kernel, stride, padding, _ = _pool_args(node)
    count_include_pad = bool(scalar_arg(node, 5, "count_include_pad", True))
    if any(padding) and count_include_pad:
        # Zero-point padding counts in the average, as in PyTorch.
        x = emit_pad(ctx, x, [(0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])],
                     x.zero_point, f"{ctx.stem(node)}_pad")
        padding = (0, 0)
    x, pads = spatial_pads(ctx, x, kernel, stride, (1, 1), padding, ctx.stem(node))
    emit_avg_pool(ctx, node, x, kernel, stride, pads)


def check_mean(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    shape = _input_shape(node)
    if node.target == aten._adaptive_avg_pool2d.default:
        if len(shape) != 4 or any(s % o for s, o in zip(shape[2:], pair(node.args[1]))):
            return "adaptive average pooling is lowered only for output sizes dividing the input"
        return None
    if not is_global_pool(node):
        return check_reduction(node, compile_spec, constants)
    return reduction_objection(compile_spec, shape[2:], input_bits(node), global_pool=True)


@register(aten.mean.dim, aten._adaptive_avg_pool2d.default, check=check_mean)
def lower_mean(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_mean(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    if node.target == aten.mean.dim and not is_global_pool(node):
        lower_reduction(ctx, node)  # any other dims: REDUCE_SUM
        return
    x = ctx.qtensor(node.args[0], node)
    _, _, h, w = x.shape
    if node.target == aten._adaptive_avg_pool2d.default:
        oh, ow = pair(node.args[1])
        kernel = (h // oh, w // ow)
    else:
        kernel = (h, w)
    emit_avg_pool(ctx, node, x, kernel, kernel, [0, 0, 0, 0])
