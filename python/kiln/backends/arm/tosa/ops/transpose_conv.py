"""Transposed convolution (aten.convolution with transposed=True) -> TRANSPOSE_CONV2D + RESCALE.

PyTorch's ``conv_transpose2d`` writes ``x[iy] * w[ic, oc, ky]`` to output row
``iy * stride - padding + ky``; TOSA's TRANSPOSE_CONV2D writes it to ``iy * stride +
out_pad_top + ky`` with weights [OC, KH, KW, IC]: the same operation with
``out_pad = -padding`` before and ``output_padding - padding`` after. 1-D transposed
convolutions run as 2-D ones over [N, C, 1, L] (see conv.py). The weights are quantized per
output channel, which for a transposed convolution is their axis 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.constraints import convolution_objection
from kiln.backends.arm.tosa.builder import attribute
from kiln.backends.arm.tosa.context import LoweringContext, pair, scalar_arg
from kiln.backends.arm.tosa.ops.conv import nchw, quantized_bias
from kiln.backends.arm.tosa.values import ConstTensor, QTensor


def _transposed_args(args: dict[str, Any], one_d: bool) -> tuple[tuple[int, int], ...]:
    """(stride, padding, output_padding, dilation) as (H, W) pairs."""
    stride, padding = pair(args["stride"]), pair(args["padding"])
    output_padding, dilation = pair(args["output_padding"]), pair(args["dilation"])
    if one_d:  # along W, with H = 1
        return (1, stride[0]), (0, padding[0]), (0, output_padding[0]), (1, dilation[0])
    return stride, padding, output_padding, dilation


def check_transposed(node: torch.fx.Node, args: dict[str, Any], compile_spec: Any) -> str | None:
    one_d = len(node.args[0].meta["val"].shape) == 3
    stride, padding, output_padding, dilation = _transposed_args(args, one_d)
    if int(args["groups"]) != 1:
        return f"grouped transposed convolution (groups={args['groups']}) is not lowered"
    if dilation != (1, 1):
        return f"dilated transposed convolution (dilation {list(dilation)}) is not lowered: TOSA has no dilation there"
    return convolution_objection(compile_spec, stride, padding, dilation, transposed=True, one_d=one_d)


def _weights(ctx: LoweringContext, node: torch.fx.Node, weight: ConstTensor) -> tuple[np.ndarray, np.ndarray]:
    """(int8 weights as [OC, KH, KW, IC], per-output-channel scales) of [IC, OC, KH, KW] weights."""
    out_c = weight.shape[1]
    if not weight.is_quantized or weight.data.dtype != np.int8:
        raise ctx.fail(node, "weights must be int8 quantized constants")
    if weight.axis not in (None, 1) and np.asarray(weight.scales).size > 1:
        raise ctx.fail(node, f"weights are quantized along axis {weight.axis}; a transposed convolution's output "
                             "channels are axis 1")
    if np.any(weight.channel_zero_points(out_c) != 0):
        raise ctx.fail(node, "weights must be symmetric (zero point 0)")
    return weight.data.transpose(1, 2, 3, 0), weight.channel_scales(out_c)


def lower_transposed(ctx: LoweringContext, node: torch.fx.Node, args: dict[str, Any], x: QTensor,
                     weight: ConstTensor, one_d: bool) -> None:
    """``x`` (NCHW, a 1-D input already as [N, C, 1, L]) -> TRANSPOSE_CONV2D -> RESCALE."""
    out = ctx.output_quant(node)
    stride, padding, output_padding, _ = _transposed_args(args, one_d)
    ohwi, w_scales = _weights(ctx, node, weight)
    acc_scales = x.scale * w_scales
    bias = quantized_bias(ctx, node, scalar_arg(node, 2, "bias", None), acc_scales)
    n, ih, iw, _ = x.tosa_shape
    out_c, kh, kw, _ = ohwi.shape
    out_pad = [-padding[0], output_padding[0] - padding[0], -padding[1], output_padding[1] - padding[1]]
    oh = (ih - 1) * stride[0] + out_pad[0] + out_pad[1] + kh
    ow = (iw - 1) * stride[1] + out_pad[2] + out_pad[3] + kw
    stem = ctx.stem(node)
    builder = ctx.builder
    operands = [
        x.name,
        builder.const(ohwi.astype(np.int8), f"{stem}_weight"),
        builder.const(bias, f"{stem}_bias"),
        builder.zero_point(x.zero_point, ts.DType.INT8, f"{stem}_input"),
        builder.zero_point(0, ts.DType.INT8, f"{stem}_weight"),
    ]
    attr = attribute("TransposeConv2d", out_pad, list(stride), False, ts.DType.INT32)
    shape = (n, oh, ow, out_c)
    acc = builder.op(ts.Op.TRANSPOSE_CONV2D, operands, shape, ts.DType.INT32, attr, stem)
    ctx.finish(node, out, acc, shape, ts.DType.INT32, acc_scales, logical_shape=nchw(shape))
