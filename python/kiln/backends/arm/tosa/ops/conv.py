"""aten.convolution -> CONV2D / DEPTHWISE_CONV2D (+ SLICE/CONCAT for groups) + RESCALE.

1-D convolutions ([N, C, L]) run as 2-D ones over [N, C, 1, L]; transposed convolutions
are in :mod:`transpose_conv`. A batch above 1 folds into the height where every output
row reads one input row (:func:`folds_batch_into_height`): the NPU sees batch 1.

The int32 accumulator's real scale is ``input_scale * weight_scale[c]``; the bias is
quantized to that scale, and a per-channel RESCALE brings the accumulator to the
output's quantization (Vela folds it into the convolution's output stage).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.constraints import convolution_objection
from kiln.backends.arm.tosa.builder import TosaBuilder, attribute
from kiln.backends.arm.tosa.context import LoweringContext, pair, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.rescale import emit_rescale
from kiln.backends.arm.tosa.ops.reshape import relayout
from kiln.backends.arm.tosa.values import ConstTensor, QTensor

aten = torch.ops.aten


def conv_weights(ctx: LoweringContext, node: torch.fx.Node, weight: ConstTensor,
                 out_channels: int) -> tuple[np.ndarray, np.ndarray]:
    """(int8 weights as stored, per-output-channel float scales); checks symmetry."""
    if not weight.is_quantized or weight.data.dtype != np.int8:
        raise ctx.fail(node, "weights must be int8 quantized constants (dequantize_per_channel/tensor)")
    if weight.axis not in (None, 0) and np.asarray(weight.scales).size > 1:
        raise ctx.fail(node, f"weights are quantized along axis {weight.axis}; expected the output-channel axis")
    if np.any(weight.channel_zero_points(out_channels) != 0):
        raise ctx.fail(node, "weights must be symmetric (zero point 0): TOSA takes one weight zero point")
    return weight.data, weight.channel_scales(out_channels)


def accumulator_dtype(input_dtype: ts.DType) -> ts.DType:
    """What a convolution of ``input_dtype`` activations and int8 weights accumulates in:
    int32 for int8 inputs, TOSA's INT48 for int16 ones (the U85 holds it in 64 bits)."""
    return ts.DType.INT48 if input_dtype == ts.DType.INT16 else ts.DType.INT32


def quantized_bias(ctx: LoweringContext, node: torch.fx.Node, bias_arg: Any,
                   acc_scales: np.ndarray, acc_dtype: ts.DType = ts.DType.INT32) -> np.ndarray:
    """The bias as integers at the accumulator scale (zeros when there is none): int32, or
    48-bit values (held in int64) for an INT48 accumulator."""
    if bias_arg is None:
        return np.zeros(acc_scales.size, np.int64 if acc_dtype == ts.DType.INT48 else np.int32)
    real = ctx.const(bias_arg, node).dequantized().astype(np.float64).reshape(-1)
    quantized = np.round(real / acc_scales)
    bits = 48 if acc_dtype == ts.DType.INT48 else 32
    if np.any(np.abs(quantized) > 2 ** (bits - 1) - 1):
        raise ctx.fail(node, f"bias does not fit int{bits} at the accumulator scale")
    return quantized.astype(np.int64 if bits == 48 else np.int32)


def exact_pads(size: int, kernel: int, stride: int, dilation: int, pad: int) -> tuple[int, int, int]:
    """(before, after, crop): TOSA needs the output size to divide exactly, so trailing
    padding and input rows that no output reads (PyTorch's floor division ignores them)
    are dropped - first the padding, then ``crop`` input rows."""
    remainder = (size - 1 + 2 * pad - (kernel - 1) * dilation) % stride
    if remainder > pad:
        return pad, 0, remainder - pad
    return pad, pad - remainder, 0


def crop_hw(ctx: LoweringContext, x: QTensor, crop_h: int, crop_w: int, stem: str) -> QTensor:
    """``x`` without its last ``crop_h`` rows and ``crop_w`` columns (SLICE), if any."""
    if not crop_h and not crop_w:
        return x
    n, c, h, w = x.shape
    result = QTensor("", (n, c, h - crop_h, w - crop_w), x.dtype, x.scale, x.zero_point)
    starts = ctx.builder.shape_const([0, 0, 0, 0], f"{stem}_start")
    sizes = ctx.builder.shape_const(list(result.tosa_shape), f"{stem}_size")
    name = ctx.builder.op(ts.Op.SLICE, [x.name, starts, sizes], result.tosa_shape, x.dtype, None, stem)
    return result.renamed(name)


def spatial_pads(ctx: LoweringContext, x: QTensor, kernel: Sequence[int], stride: Sequence[int],
                 dilation: Sequence[int], padding: Sequence[int], stem: str) -> tuple[QTensor, list[int]]:
    """The input (cropped if needed) and TOSA's [top, bottom, left, right] padding."""
    top, bottom, crop_h = exact_pads(x.shape[2], kernel[0], stride[0], dilation[0], padding[0])
    left, right, crop_w = exact_pads(x.shape[3], kernel[1], stride[1], dilation[1], padding[1])
    return crop_hw(ctx, x, crop_h, crop_w, f"{stem}_crop"), [top, bottom, left, right]


def emit_conv2d(builder: TosaBuilder, source: str, in_shape: Sequence[int], in_zp: int,
                weight: np.ndarray, bias: np.ndarray, pads: Sequence[int], stride: Sequence[int],
                dilation: Sequence[int], depthwise: bool, stem: str,
                in_dtype: ts.DType = ts.DType.INT8) -> tuple[str, tuple[int, ...]]:
    """CONV2D (weight OHWI) or DEPTHWISE_CONV2D (weight HWCM) on an NHWC int8 (or int16)
    tensor; the result is in :func:`accumulator_dtype` of ``in_dtype``."""
    n, h, w, _ = in_shape
    kh, kw = (weight.shape[1], weight.shape[2]) if not depthwise else (weight.shape[0], weight.shape[1])
    out_c = weight.shape[0] if not depthwise else weight.shape[2] * weight.shape[3]
    oh = (h - 1 + pads[0] + pads[1] - (kh - 1) * dilation[0]) // stride[0] + 1
    ow = (w - 1 + pads[2] + pads[3] - (kw - 1) * dilation[1]) // stride[1] + 1
    acc_dtype = accumulator_dtype(in_dtype)
    bias_values = bias.astype(np.int64) if acc_dtype == ts.DType.INT48 else bias.astype(np.int32)
    operands = [
        source,
        builder.const(weight.astype(np.int8), f"{stem}_weight"),
        builder.const(bias_values, f"{stem}_bias", acc_dtype),
        builder.zero_point(in_zp, in_dtype, f"{stem}_input"),
        builder.zero_point(0, ts.DType.INT8, f"{stem}_weight"),
    ]
    kind, op = ("DepthwiseConv2d", ts.Op.DEPTHWISE_CONV2D) if depthwise else ("Conv2d", ts.Op.CONV2D)
    attr = attribute(kind, list(pads), list(stride), list(dilation), False, acc_dtype)
    shape = (n, oh, ow, out_c)
    return builder.op(op, operands, shape, acc_dtype, attr, stem), shape


def _slice_channels(builder: TosaBuilder, source: str, shape: Sequence[int], start: int, size: int,
                    stem: str, dtype: ts.DType = ts.DType.INT8) -> str:
    out_shape = (*shape[:3], size)
    starts = builder.shape_const([0, 0, 0, start], f"{stem}_start")
    sizes = builder.shape_const(list(out_shape), f"{stem}_size")
    return builder.op(ts.Op.SLICE, [source, starts, sizes], out_shape, dtype, None, stem)


def spatial_args(args: dict[str, Any], one_d: bool) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """(stride, padding, dilation) as (H, W) pairs; a 1-D convolution runs along W with H = 1."""
    if one_d:
        return (1, pair(args["stride"])[0]), (0, pair(args["padding"])[0]), (1, pair(args["dilation"])[0])
    return pair(args["stride"]), pair(args["padding"]), pair(args["dilation"])


def check_conv(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    args = _conv_args(node)
    shape = node.args[0].meta["val"].shape if isinstance(node.args[0], torch.fx.Node) else ()
    if len(shape) not in (3, 4):
        return f"only 1-D and 2-D convolutions are lowered, input rank is {len(shape)}"
    if isinstance(args["padding"], str):
        return f"string padding {args['padding']!r} is not lowered"
    if args["transposed"]:
        from kiln.backends.arm.tosa.ops.transpose_conv import check_transposed

        return check_transposed(node, args, compile_spec)
    stride, padding, dilation = spatial_args(args, len(shape) == 3)
    groups = int(args["groups"])
    return convolution_objection(compile_spec, stride, padding, dilation, depthwise=groups > 1 and groups == shape[1])


def _conv_args(node: torch.fx.Node) -> dict[str, Any]:
    if node.target == aten.convolution.default:
        names = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")
        return dict(zip(names, node.args[3:9]))
    return {
        "stride": scalar_arg(node, 3, "stride", 1), "padding": scalar_arg(node, 4, "padding", 0),
        "dilation": scalar_arg(node, 5, "dilation", 1), "transposed": False,
        "groups": scalar_arg(node, 6, "groups", 1),
    }


def folds_batch_into_height(node: torch.fx.Node) -> bool:
    """True for a convolution (not transposed, one group or depthwise) whose kernel is one row
    high with stride 1 and no padding along the height: 1-D convolutions, pointwise 1x1 ones.
    Each output row then reads one input row, and ``[N, H, W, C]`` computes as ``[1, N H, W, C]``."""
    if node.target not in (aten.convolution.default, aten.conv2d.default):
        return False
    args = _conv_args(node)
    shape = tuple(node.args[0].meta["val"].shape)
    weight = tuple(node.args[1].meta["val"].shape)
    if args["transposed"] or len(shape) not in (3, 4) or isinstance(args["padding"], str):
        return False
    groups = int(args["groups"])
    if groups != 1 and not (groups == shape[1] and weight[1] == 1):
        return False
    if len(shape) == 3:
        return True
    stride, padding, _ = spatial_args(args, False)
    return weight[2] == 1 and stride[0] == 1 and padding[0] == 0


def _fold_batch(ctx: LoweringContext, x: QTensor, stem: str) -> QTensor:
    """``x`` ([N, C, H, W]) as [1, C, N H, W]: the same NHWC bytes."""
    n, c, h, w = x.shape
    folded = QTensor("", (1, c, n * h, w), x.dtype, x.scale, x.zero_point)
    return folded.renamed(ctx.reshape(x.name, folded.tosa_shape, x.dtype, f"{stem}_fold_batch"))


def as_2d(ctx: LoweringContext, x: QTensor, weight: ConstTensor, stem: str) -> tuple[QTensor, ConstTensor]:
    """A 1-D convolution's input [N, C, L] as [N, C, 1, L] and its weight [O, I, K] as [O, I, 1, K]."""
    n, c, length = x.shape
    data = weight.data.reshape(weight.shape[0], weight.shape[1], 1, weight.shape[2])
    return relayout(ctx, x, (n, c, 1, length), f"{stem}_2d"), replace(weight, data=data)


@register(aten.convolution.default, aten.conv2d.default, check=check_conv)
def lower_convolution(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_conv(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    args = _conv_args(node)
    x = ctx.qtensor(node.args[0], node)
    weight = ctx.const(node.args[1], node)
    stem = ctx.stem(node)
    one_d = x.rank == 3
    if one_d:
        x, weight = as_2d(ctx, x, weight, stem)
    if args["transposed"]:
        from kiln.backends.arm.tosa.ops.transpose_conv import lower_transposed

        lower_transposed(ctx, node, args, x, weight, one_d)
        return
    out = ctx.output_quant(node)
    out_c, in_per_group, kh, kw = weight.shape
    groups = int(args["groups"])
    stride, padding, dilation = spatial_args(args, one_d)
    w_int8, w_scales = conv_weights(ctx, node, weight, out_c)
    acc_scales = x.scale * w_scales
    acc_dtype = accumulator_dtype(x.dtype)
    bias = quantized_bias(ctx, node, scalar_arg(node, 2, "bias", None), acc_scales, acc_dtype)
    channels = x.shape[1]
    x, pads = spatial_pads(ctx, x, (kh, kw), stride, dilation, padding, stem)
    builder = ctx.builder
    batch = x.shape[0]
    if batch > 1 and groups in (1, channels) and folds_batch_into_height(node):
        x = _fold_batch(ctx, x, stem)
    if groups == 1:
        acc, shape = emit_conv2d(builder, x.name, x.tosa_shape, x.zero_point, w_int8.transpose(0, 2, 3, 1),
                                 bias, pads, stride, dilation, False, stem, x.dtype)
    elif groups == channels and in_per_group == 1:
        multiplier = out_c // channels
        hwcm = w_int8.reshape(channels, multiplier, kh, kw).transpose(2, 3, 0, 1)
        acc, shape = emit_conv2d(builder, x.name, x.tosa_shape, x.zero_point, hwcm, bias, pads, stride,
                                 dilation, True, stem, x.dtype)
    else:
        _grouped_convolution(ctx, node, out, x, w_int8, bias, acc_scales, groups, pads, stride, dilation, stem)
        return
    if shape[0] != batch:  # the batch was folded into the height: unfold the accumulators
        unfolded = (batch, shape[1] // batch, shape[2], shape[3])
        acc, shape = ctx.reshape(acc, unfolded, acc_dtype, f"{stem}_unfold_batch"), unfolded
    ctx.finish(node, out, acc, shape, acc_dtype, acc_scales, logical_shape=nchw(shape))


def nchw(nhwc_shape: Sequence[int]) -> tuple[int, ...]:
    """The logical (NCHW) shape of an NHWC TOSA shape."""
    n, h, w, c = nhwc_shape
    return (n, c, h, w)


def _grouped_convolution(ctx: LoweringContext, node: torch.fx.Node, out: Any, x: QTensor, w_int8: np.ndarray,
                         bias: np.ndarray, acc_scales: np.ndarray, groups: int, pads: Sequence[int],
                         stride: Sequence[int], dilation: Sequence[int], stem: str) -> None:
    """One CONV2D per group on a channel slice, each RESCALEd to the output's int8, then CONCAT.

    Why not CONCAT the int32 accumulators and RESCALE once: Vela 5.2 (regor) folds that
    per-channel RESCALE into each group's convolution but gives every group the scales of
    the first channels (found by the virtual NPU; tests/python/arm/vnpu/test_lowered_ops.py).
    RESCALE acts per channel, so both graphs mean the same thing.
    """
    builder = ctx.builder
    out_c, in_per_group = w_int8.shape[0], w_int8.shape[1]
    per_group_out = out_c // groups
    parts, shape = [], ()
    for g in range(groups):
        part_in = _slice_channels(builder, x.name, x.tosa_shape, g * in_per_group, in_per_group, f"{stem}_g{g}_in",
                                  x.dtype)
        in_shape = (*x.tosa_shape[:3], in_per_group)
        rows = slice(g * per_group_out, (g + 1) * per_group_out)
        acc, part_shape = emit_conv2d(builder, part_in, in_shape, x.zero_point, w_int8[rows].transpose(0, 2, 3, 1),
                                      bias[rows], pads, stride, dilation, False, f"{stem}_g{g}", x.dtype)
        parts.append(emit_rescale(builder, acc, part_shape, accumulator_dtype(x.dtype), out.dtype,
                                  acc_scales[rows] / out.scale, 0, out.zero_point, f"{stem}_g{g}_rescale"))
        shape = (*part_shape[:3], out_c)
    joined = builder.op(ts.Op.CONCAT, parts, shape, out.dtype, attribute("Concat", 3), f"{stem}_cat")
    # Already in the output's quantization: finish only clamps and binds.
    ctx.finish(node, out, joined, shape, out.dtype, out.scale, out.zero_point, logical_shape=nchw(shape))
