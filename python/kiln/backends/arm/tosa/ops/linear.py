"""linear / addmm / mm with constant weights -> 1x1 CONV2D; activation x activation -> MATMUL.

A fully connected layer is a 1x1 convolution over an NHWC tensor [1, M, 1, IC]:
that is the form Vela maps to its fully connected / convolution kernels on every
Ethos-U (TOSA has no FULLY_CONNECTED in 1.0). MATMUL (both operands computed) goes
to Vela's matmul; Vela 5.2 compiles it for U55, U65 and U85 (tested).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.constraints import matmul_objection
from kiln.backends.arm.tosa.context import LoweringContext, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.conv import accumulator_dtype, conv_weights, emit_conv2d, quantized_bias
from kiln.backends.arm.tosa.values import ConstTensor, QTensor
from kiln.delegation.nodes import quantized_dtype

aten = torch.ops.aten


# Operators between a constant and its use that keep it constant (weight dequantize,
# the transpose ``linear`` decomposes into, views).
_CONSTANT_PATH = {
    "dequantize_per_channel", "dequantize_per_tensor", "permute", "permute_copy", "t", "transpose",
    "view", "view_copy", "_unsafe_view", "reshape", "clone", "alias",
}


def is_constant(arg: Any, constants: Collection[Any] = ()) -> bool:
    """True when ``arg`` is a constant: a ``get_attr``, a node of ``constants``, or a
    dequantize/transpose/view of one."""
    while isinstance(arg, torch.fx.Node):
        if arg.op == "get_attr" or arg in constants:
            return True
        name = getattr(arg.target, "__name__", "").split(".")[0]
        if arg.op != "call_function" or name not in _CONSTANT_PATH or not arg.args:
            return False
        arg = arg.args[0]
    return False


def linear_operands(node: torch.fx.Node) -> tuple[Any, Any, Any]:
    """(input, weight, bias) of addmm(bias, x, w), linear(x, w, bias), mm/bmm(x, w)."""
    if node.target == aten.addmm.default:
        return node.args[1], node.args[2], node.args[0]
    if node.target == aten.linear.default:
        return node.args[0], node.args[1], scalar_arg(node, 2, "bias", None)
    return node.args[0], node.args[1], None


def _rank(arg: Any) -> int:
    return len(arg.meta["val"].shape) if isinstance(arg, torch.fx.Node) else 0


def check_linear(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    if node.target in (aten.addmm.default,):
        beta, alpha = scalar_arg(node, 3, "beta", 1), scalar_arg(node, 4, "alpha", 1)
        if beta != 1 or alpha != 1:
            return f"addmm with beta={beta}, alpha={alpha} is not lowered (only 1, 1)"
    x, weight, bias = linear_operands(node)
    if is_constant(weight, constants):
        if _rank(weight) != 2:
            return f"fully connected weight of rank {_rank(weight)} is not lowered (a matrix)"
        if _rank(x) not in (2, 3):
            return f"fully connected input of rank {_rank(x)} is not lowered (rank 2 or 3)"
        if bias is not None and not is_constant(bias, constants):
            return "fully connected layer with a computed bias is not lowered (the bias must be constant)"
        return None
    if bias is not None:
        return f"{node.target.__name__.split('.')[0]} of two computed tensors with a bias is not lowered"
    return check_matmul(node, compile_spec, constants)


def check_matmul(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    x, weight, _ = linear_operands(node)
    ranks = sorted({_rank(x), _rank(weight)})
    if not set(ranks) <= {2, 3}:
        return f"matmul operands of rank {ranks} are not lowered (rank 2 or 3)"
    if _rank(x) != _rank(weight):
        return f"matmul of a rank-{_rank(x)} and a rank-{_rank(weight)} tensor is not lowered (equal ranks)"
    dtypes = [str(dtype).removeprefix("torch.") for arg in (x, weight) if (dtype := quantized_dtype(arg))]
    return matmul_objection(compile_spec, int(x.meta["val"].shape[-1]), dtypes)


def lower_fully_connected(ctx: LoweringContext, node: torch.fx.Node, x: QTensor, weight: ConstTensor,
                          bias_arg: Any) -> None:
    """``x @ weight.T + bias`` with ``weight`` as [OC, IC], via CONV2D 1x1."""
    if x.rank not in (2, 3):
        raise ctx.fail(node, f"fully connected input of rank {x.rank} is not lowered")
    out = ctx.output_quant(node)
    out_c, in_c = weight.shape
    w_int8, w_scales = conv_weights(ctx, node, weight, out_c)
    acc_scales = x.scale * w_scales
    acc_dtype = accumulator_dtype(x.dtype)
    bias = quantized_bias(ctx, node, bias_arg, acc_scales, acc_dtype)
    stem = ctx.stem(node)
    rows = math.prod(x.shape[:-1])
    nhwc = (1, rows, 1, in_c)
    source = ctx.reshape(x.name, nhwc, x.dtype, f"{stem}_in")
    acc, shape = emit_conv2d(ctx.builder, source, nhwc, x.zero_point, w_int8.reshape(out_c, 1, 1, in_c),
                             bias, (0, 0, 0, 0), (1, 1), (1, 1), False, stem, x.dtype)
    ctx.finish(node, out, acc, shape, acc_dtype, acc_scales)


def lower_matmul(ctx: LoweringContext, node: torch.fx.Node, a: QTensor, b: QTensor) -> None:
    """MATMUL of two int8 tensors (rank 2 operands become batch 1)."""
    reason = check_matmul(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    out = ctx.output_quant(node)
    stem = ctx.stem(node)
    a3 = a.tosa_shape if a.rank == 3 else (1, *a.tosa_shape)
    b3 = b.tosa_shape if b.rank == 3 else (1, *b.tosa_shape)
    a_name = _materialized(ctx, a, stem)
    a_name = a_name if a.rank == 3 else ctx.reshape(a_name, a3, a.dtype, f"{stem}_a")
    b_name = b.name if b.rank == 3 else ctx.reshape(b.name, b3, b.dtype, f"{stem}_b")
    operands = [a_name, b_name, ctx.builder.zero_point(a.zero_point, a.dtype, f"{stem}_a"),
                ctx.builder.zero_point(b.zero_point, b.dtype, f"{stem}_b")]
    shape = (a3[0], a3[1], b3[2])
    acc = ctx.builder.op(ts.Op.MATMUL, operands, shape, ts.DType.INT32, None, stem)
    ctx.finish(node, out, acc, shape, ts.DType.INT32, a.scale * b.scale)


@register(aten.addmm.default, aten.mm.default, aten.linear.default, aten.bmm.default, check=check_linear)
def lower_linear(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_linear(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    x_arg, w_arg, bias_arg = linear_operands(node)
    x = ctx.qtensor(x_arg, node)
    w_value = ctx.value(w_arg, node)
    if isinstance(w_value, QTensor):
        if bias_arg is not None:
            raise ctx.fail(node, "matmul of two computed tensors with a bias is not lowered")
        lower_matmul(ctx, node, x, w_value)
        return
    # addmm/mm take the weight transposed ([IC, OC]); linear takes it as [OC, IC].
    weight = w_value if node.target == aten.linear.default else w_value.permuted((1, 0))
    if weight.data.ndim != 2:
        raise ctx.fail(node, f"weight of shape {weight.shape} is not a matrix")
    lower_fully_connected(ctx, node, x, weight, bias_arg)


# Operators Vela 5.2 folds into how the next operator reads its input (a view, no copy).
_FOLDED_VIEWS = (ts.Op.RESHAPE, ts.Op.TRANSPOSE, ts.Op.IDENTITY)


def _materialized(ctx: LoweringContext, a: QTensor, stem: str) -> str:
    """``a`` as a tensor of its own when it is a view of a SLICE.

    Vela 5.2 folds a SLICE (and the reshapes and cancelling transposes after it) into the
    address a MATMUL reads its first operand from, and then reads every batch of that
    operand at the address of the first: on every Ethos-U, a batched product of a sliced
    tensor (attention's q taken from a stacked q/k/v) computes with the first head only.
    A lookup table of the identity is a real operation that Vela cannot fold (it folds an
    identity RESCALE or CLAMP away)."""
    if a.dtype != ts.DType.INT8 or not ctx.builder.comes_from(a.name, ts.Op.SLICE, _FOLDED_VIEWS):
        return a.name
    identity = ctx.builder.const(np.arange(-128, 128, dtype=np.int8), f"{stem}_identity")
    return ctx.builder.op(ts.Op.TABLE, [a.name, identity], a.tosa_shape, a.dtype, None, f"{stem}_a_copy")
