"""Replace the quantized patterns of an int8 program with ``cortex_m::`` operator calls.

Every ``dequantize -> op -> [clamp] -> quantize`` the kernels implement becomes one call
on the int8 tensors, with the requantization parameters CMSIS-NN's arithmetic needs
(:mod:`kiln.backends.cortex_m.requantize`). Convolutions and pools work on NHWC tensors:
they are wrapped in ``cortex_m::transpose`` calls that :mod:`kiln.backends.cortex_m.layout`
then cancels between neighbouring layers. What has no ``cortex_m::`` form keeps its
dequantize/quantize pair around a portable float kernel; the remaining quantizes and
dequantizes themselves become ``cortex_m::`` ones. (Elementwise functions of one int8
tensor become table lookups: :mod:`kiln.backends.cortex_m.table_regions`.)
"""

from __future__ import annotations

import logging
from typing import Callable, Optional

import torch
from torch.fx import Node

from kiln.backends.cortex_m import requantize
from kiln.backends.cortex_m.graph_edit import (
    DEQUANTIZE,
    DEQUANTIZE_PER_CHANNEL,
    QUANTIZE,
    GraphEditor,
    QParams,
    dequantized,
    is_getitem,
    meta_tensor,
    only_user,
    quantize_qparams,
    shape_of,
)
from kiln.backends.cortex_m.ops import kiln_op, op
from kiln.backends.cortex_m.patterns import QuantizedOutput, int8_inputs, quantized_output
from kiln.backends.cortex_m.table_regions import requantized

logger = logging.getLogger(__name__)
aten = torch.ops.aten

TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]
# Windows the conv kernel gathers (im2col) at a time (kernels/cortex_m/util/conv_args.h).
IM2COL_ROWS = 6


def conv_scratch_bytes(depth: int, direct: bool) -> int:
    """The scratch memory ``cortex_m::quantized_conv2d`` takes for a product of ``depth``
    (KH * KW * input channels per group) in the flavour that takes the most (the kernels'
    conv_scratch_bytes): the gathered windows unless ``direct`` (a 1x1 convolution reading
    its pixels in place), then the product's own: Helium interleaves three rows in 16-byte
    chunks (gemm_s8_mve.cpp), the DSP extension widens two rows to int16 (gemm_s8_dsp.cpp).
    Sizing the scratch tensor by it keeps every convolution off the temp allocator."""
    helium = 3 * ((depth + 15) // 16) * 16
    dsp = 2 * 2 * ((depth + 3) // 4) * 4
    windows = (IM2COL_ROWS * depth + 15) // 16 * 16  # rounded up: what follows is aligned
    return (0 if direct else windows) + max(helium, dsp)


def transpose(editor: GraphEditor, source: Node, perm: list[int], before: Node) -> Node:
    shape = shape_of(source)
    return editor.call(op("transpose"), (source, perm), meta_tensor([shape[p] for p in perm], torch.int8),
                       before=before)


def _nchw_result(editor: GraphEditor, nhwc: Node, out: QuantizedOutput) -> None:
    """Routes the users of the replaced quantize to the NCHW view of an NHWC result."""
    out.quantize.replace_all_uses_with(transpose(editor, nhwc, TO_NCHW, out.quantize))


def _weight(editor: GraphEditor, arg: object, channel_axis: int = 0) -> Optional[tuple[torch.Tensor, list[float]]]:
    """A symmetric int8 weight constant and its scales (one per output channel, whose axis
    is `channel_axis`, or one)."""
    if not isinstance(arg, Node) or arg.op != "call_function":
        return None
    if arg.target is DEQUANTIZE_PER_CHANNEL:
        source, scales, zero_points, axis = arg.args[:4]
        weight, scale_values, zp_values = (editor.constant_value(n) for n in (source, scales, zero_points))
        if weight is None or scale_values is None or axis != channel_axis or (zp_values is not None and zp_values.any()):
            return None
        return weight, [float(s) for s in scale_values.reshape(-1)]
    found = dequantized(arg)
    if found is None or found[1].zero_point != 0:
        return None
    weight = editor.constant_value(found[0])
    return None if weight is None else (weight, [found[1].scale])


def _bias(editor: GraphEditor, arg: object) -> Optional[torch.Tensor]:
    """The int32 values of a bias dequantize (None if the op has no such bias)."""
    if not isinstance(arg, Node) or arg.op != "call_function" or arg.target not in (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL):
        return None
    value = editor.constant_value(arg.args[0])
    return value if value is not None and value.dtype == torch.int32 else None


def lower_transposed_convolution(editor: GraphEditor, node: Node) -> bool:
    """A 2-D transposed convolution of one group on NHWC tensors: the weight, [C_in, C_out,
    KH, KW] in PyTorch, goes OHWI (C_out, KH, KW, C_in), as the kernel reads it."""
    x, w, b, stride, padding, dilation, _, output_padding, groups = node.args
    inputs = int8_inputs(x)
    out = quantized_output(node)
    weight = _weight(editor, w, channel_axis=1)
    if inputs is None or out is None or weight is None or groups != 1 or len(shape_of(node)) != 4:
        return False
    bias = _bias(editor, b) if b is not None else None
    if b is not None and bias is None:
        return False
    (source, in_q), = inputs
    values, scales = weight
    in_channels, out_channels, kh, kw = values.shape
    scales = scales * out_channels if len(scales) == 1 else scales
    multipliers, shifts = requantize.per_channel_multipliers([in_q.scale * s / out.qparams.scale for s in scales])
    n, c, h, width = shape_of(node)
    args = (transpose(editor, source, TO_NHWC, out.quantize), editor.constant("weight", values.permute(1, 2, 3, 0)),
            None if bias is None else editor.constant("bias", bias), list(stride), list(padding),
            list(output_padding), list(dilation), -in_q.zero_point, out.qparams.zero_point,
            editor.constant("multipliers", multipliers), editor.constant("shifts", shifts), out.activation_min,
            out.activation_max, editor.scratch(conv_scratch_bytes(kh * kw * in_channels, False)), editor.scratch(1))
    result = editor.call(op("quantized_transpose_conv2d_nhwc"), args, meta_tensor((n, h, width, c), torch.int8),
                         before=out.quantize, like=node)
    _nchw_result(editor, result, out)
    return True


def lower_convolution(editor: GraphEditor, node: Node) -> bool:
    """A 2-D convolution (1-D ones as 2-D with a height of 1) on NHWC tensors."""
    if node.args[6]:
        return lower_transposed_convolution(editor, node)
    x, w, b, stride, padding, dilation, transposed, _, groups = node.args
    inputs = int8_inputs(x)
    out = quantized_output(node)
    weight = _weight(editor, w)
    rank = len(shape_of(node))
    if inputs is None or out is None or weight is None or transposed or rank not in (3, 4):
        return False
    bias = _bias(editor, b) if b is not None else None
    if b is not None and bias is None:
        return False
    (source, in_q), = inputs
    values, scales = weight
    shape = shape_of(node)
    if rank == 3:
        n, c, length = shape_of(source)
        source = editor.call(aten.view.default, (source, [n, c, 1, length]), meta_tensor((n, c, 1, length), torch.int8),
                             before=out.quantize)
        values = values.unsqueeze(2)
        stride, padding, dilation = [1, *stride], [0, *padding], [1, *dilation]
        shape = (shape[0], shape[1], 1, shape[2])
    out_channels, group_channels, kh, kw = values.shape
    scales = scales * out_channels if len(scales) == 1 else scales
    multipliers, shifts = requantize.per_channel_multipliers([in_q.scale * s / out.qparams.scale for s in scales])
    in_channels = shape_of(source)[1]
    depthwise = groups == in_channels and group_channels == 1 and groups > 1
    weight_node = editor.constant("weight", values.permute(1, 2, 3, 0) if depthwise else values.permute(0, 2, 3, 1))
    bias_node = None if bias is None else editor.constant("bias", bias)
    nhwc_in = transpose(editor, source, TO_NHWC, out.quantize)
    n, c, h, width = shape
    val = meta_tensor((n, h, width, c), torch.int8)
    tail = (editor.constant("multipliers", multipliers), editor.constant("shifts", shifts),
            out.activation_min, out.activation_max)
    if depthwise:
        args = (nhwc_in, weight_node, bias_node, list(stride), list(padding), list(dilation), out_channels // groups,
                -in_q.zero_point, out.qparams.zero_point, *tail, editor.scratch(1))
        result = editor.call(op("quantized_depthwise_conv2d_nhwc"), args, val, before=out.quantize, like=node)
    else:
        direct = (kh, kw) == (1, 1) and list(stride) == [1, 1] and list(padding) == [0, 0] and groups == 1
        scratch = editor.scratch(conv_scratch_bytes(kh * kw * group_channels, direct))
        args = (nhwc_in, weight_node, bias_node, list(stride), list(padding), list(dilation), -in_q.zero_point,
                out.qparams.zero_point, *tail, scratch)
        result = editor.call(op("quantized_conv2d_nhwc"), args, val, before=out.quantize, like=node)
    if rank == 3:
        nchw = transpose(editor, result, TO_NCHW, out.quantize)
        flat = editor.call(aten.view.default, (nchw, list(shape_of(node))), meta_tensor(shape_of(node), torch.int8),
                           before=out.quantize)
        out.quantize.replace_all_uses_with(flat)
    else:
        _nchw_result(editor, result, out)
    return True


def _kernel_sum(weight: torch.Tensor, bias: Optional[torch.Tensor], input_offset: int) -> Optional[torch.Tensor]:
    """bias + input_offset * (each output's sum of weights): the part of a fully connected
    layer's accumulator that does not depend on the input; None if it does not fit int32."""
    total = input_offset * weight.to(torch.int64).sum(dim=1)
    if bias is not None:
        total = total + bias.to(torch.int64)
    if total.numel() and (total.min() < -(1 << 31) or total.max() >= 1 << 31):
        return None
    return total.to(torch.int32)


def lower_linear(editor: GraphEditor, node: Node) -> bool:
    """``addmm(bias, x, permute(w))`` or ``mm(x, permute(w))``: a per-tensor fully connected layer."""
    bias_arg, x, wt = node.args if node.target is aten.addmm.default else (None, *node.args)
    if node.kwargs or not isinstance(wt, Node) or wt.target is not aten.permute.default or list(wt.args[1]) != [1, 0]:
        return False
    # A linear layer on more than two dims is view -> addmm -> view in core ATen.
    flat_in = x if isinstance(x, Node) and x.target is aten.view.default and len(x.users) == 1 else None
    inputs = int8_inputs(flat_in.args[0] if flat_in is not None else x)
    reshaped = only_user(node)
    if flat_in is None or reshaped is None or reshaped.target is not aten.view.default:
        reshaped = None
    out = quantized_output(reshaped if reshaped is not None else node)
    weight = _weight(editor, wt.args[0])
    if inputs is None or out is None or weight is None or len(weight[1]) != 1 or (flat_in is None) != (reshaped is None):
        return False
    bias = _bias(editor, bias_arg) if bias_arg is not None else None
    if bias_arg is not None and (bias is None or bias.dim() != 1):
        return False
    (source, in_q), = inputs
    multiplier, shift = requantize.quantize_multiplier(in_q.scale * weight[1][0] / out.qparams.scale)
    # The kernel takes any leading dims: the views around the addmm are not needed.
    result_shape = shape_of(reshaped if reshaped is not None else node)
    if result_shape[:-1] != shape_of(source)[:-1]:
        return False
    bias_node, kernel_sum_node = None, None
    kernel_sum = _kernel_sum(weight[0], bias, -in_q.zero_point) if editor.options.linear_kernel_sums else None
    if kernel_sum is not None:
        kernel_sum_node = editor.constant("kernel_sum", kernel_sum)
    elif bias is not None:
        bias_node = editor.constant("bias", bias)
    args = (source, editor.constant("weight", weight[0]), bias_node, kernel_sum_node, -in_q.zero_point, 0,
            out.qparams.zero_point, [multiplier], [shift], out.activation_max, out.activation_min)
    result = editor.call(op("quantized_linear"), args, meta_tensor(result_shape, torch.int8), before=out.quantize,
                         like=node)
    out.quantize.replace_all_uses_with(result)
    return True


def _elementwise_shapes(a: Node, b: Node) -> bool:
    """Whether the int8 elementwise kernels pair ``a`` and ``b``: the same shape, or one of
    them a single value."""
    return shape_of(a) == shape_of(b) or meta_tensor(shape_of(a), torch.int8).numel() == 1 or \
        meta_tensor(shape_of(b), torch.int8).numel() == 1


def _lower_add_or_subtract(editor: GraphEditor, node: Node, sign: int) -> bool:
    """``a + b`` (sign 1) or ``a - b`` (sign -1): CMSIS-NN's add, the second operand's
    multiplier negated for a subtraction (as ExecuTorch lowers ``sub``)."""
    if len(node.args) != 2 or node.kwargs.get("alpha", 1) != 1:
        return False
    inputs = int8_inputs(*node.args)
    out = quantized_output(node)
    if inputs is None or out is None or not _elementwise_shapes(inputs[0][0], inputs[1][0]):
        return False
    (a, qa), (b, qb) = inputs
    (ma, sa), (mb, sb), (mo, so) = requantize.add_parameters(qa.scale, qb.scale, out.qparams.scale)
    args = (a, qa.zero_point, ma, sa, b, qb.zero_point, sign * mb, sb, out.qparams.zero_point, mo, so,
            out.activation_min, out.activation_max)
    result = editor.call(op("quantized_add"), args, meta_tensor(shape_of(node), torch.int8), before=out.quantize,
                         like=node)
    out.quantize.replace_all_uses_with(result)
    return True


def lower_add(editor: GraphEditor, node: Node) -> bool:
    return _lower_add_or_subtract(editor, node, 1)


def lower_sub(editor: GraphEditor, node: Node) -> bool:
    return _lower_add_or_subtract(editor, node, -1)


def lower_div(editor: GraphEditor, node: Node) -> bool:
    """``a / b`` of equal shapes: ``cortex_m::quantized_div`` (a float quotient, as
    ExecuTorch's kernel computes it; CMSIS-NN has no integer division)."""
    if len(node.args) != 2 or node.kwargs:
        return False
    inputs = int8_inputs(*node.args)
    out = quantized_output(node, fuse_clamp=False)
    if inputs is None or out is None or shape_of(inputs[0][0]) != shape_of(inputs[1][0]):
        return False
    (a, qa), (b, qb) = inputs
    args = (a, qa.zero_point, b, qb.zero_point, out.qparams.zero_point, qa.scale / (qb.scale * out.qparams.scale))
    result = editor.call(op("quantized_div"), args, meta_tensor(shape_of(node), torch.int8), before=out.quantize,
                         like=node)
    out.quantize.replace_all_uses_with(result)
    return True


def lower_minimum_or_maximum(editor: GraphEditor, node: Node) -> bool:
    """``minimum``/``maximum``: both operands brought to the output's qparams (quantizing is
    monotonic, so the smaller of two quantized values is the quantized smaller), then
    ``cortex_m::minimum``/``maximum`` on the int8 values."""
    inputs = int8_inputs(*node.args) if len(node.args) == 2 else None
    out = quantized_output(node, fuse_clamp=False)
    if inputs is None or out is None or not _elementwise_shapes(inputs[0][0], inputs[1][0]):
        return False
    (a, qa), (b, qb) = inputs
    if meta_tensor(shape_of(a), torch.int8).numel() < meta_tensor(shape_of(b), torch.int8).numel():
        (a, qa), (b, qb) = (b, qb), (a, qa)  # the kernels take the single value second
    name = "minimum" if node.target is aten.minimum.default else "maximum"
    args = (requantized(editor, a, qa, out.qparams, out.quantize), requantized(editor, b, qb, out.qparams,
                                                                                out.quantize))
    result = editor.call(op(name), args, meta_tensor(shape_of(node), torch.int8), before=out.quantize, like=node)
    out.quantize.replace_all_uses_with(result)
    return True


def lower_cat(editor: GraphEditor, node: Node) -> bool:
    """A concatenation of int8 tensors whose qparams differ: each brought to the output's,
    then concatenated as int8 (equal ones were moved past the dequantizes before)."""
    tensors = node.args[0]
    inputs = int8_inputs(*tensors) if isinstance(tensors, (list, tuple)) and tensors else None
    out = quantized_output(node, fuse_clamp=False)
    if inputs is None or out is None:
        return False
    sources = [requantized(editor, source, q, out.qparams, out.quantize) for source, q in inputs]
    result = editor.call(node.target, (sources, *node.args[1:]), meta_tensor(shape_of(node), torch.int8),
                         before=out.quantize, like=node)
    out.quantize.replace_all_uses_with(result)
    return True


def _channel_gate(big: tuple[int, ...], small: tuple[int, ...]) -> bool:
    """``small`` holds one value per channel of the 4-D ``big`` (a squeeze-and-excitation gate)."""
    return len(big) == 4 and big[0] == 1 and tuple(small) == (1, big[1], 1, 1)


def lower_mul(editor: GraphEditor, node: Node) -> bool:
    inputs = int8_inputs(*node.args[:2]) if len(node.args) == 2 else None
    out = quantized_output(node, fuse_clamp=False)  # the kernel has no activation range
    if inputs is None or out is None:
        return False
    (a, qa), (b, qb) = inputs
    multiplier, shift = requantize.quantize_multiplier(qa.scale * qb.scale / out.qparams.scale)
    if shape_of(a) == shape_of(b):
        args = (a, qa.zero_point, b, qb.zero_point, out.qparams.zero_point, multiplier, shift)
        result = editor.call(op("quantized_mul"), args, meta_tensor(shape_of(node), torch.int8),
                             before=out.quantize, like=node)
        out.quantize.replace_all_uses_with(result)
        return True
    if not (_channel_gate(shape_of(a), shape_of(b)) or _channel_gate(shape_of(b), shape_of(a))):
        return False
    # The kernel broadcasts one value per channel along the innermost dim: the feature map
    # goes NHWC, the gate's C values stay as they are.
    if _channel_gate(shape_of(a), shape_of(b)):
        a = transpose(editor, a, TO_NHWC, out.quantize)
    else:
        b = transpose(editor, b, TO_NHWC, out.quantize)
    n, c, h, w = shape_of(node)
    args = (a, qa.zero_point, b, qb.zero_point, out.qparams.zero_point, multiplier, shift)
    result = editor.call(op("quantized_mul"), args, meta_tensor((n, h, w, c), torch.int8), before=out.quantize,
                         like=node)
    _nchw_result(editor, result, out)
    return True


def _pair(value: object, default: list[int]) -> list[int]:
    if value is None or value == []:
        return list(default)
    items = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]  # type: ignore[arg-type]
    return items * 2 if len(items) == 1 else items


def _same_quantization(node: Node, fuse_clamp: bool) -> Optional[tuple[Node, QParams, QuantizedOutput]]:
    """A pooling node's int8 input and output, which must share scale and zero point."""
    inputs = int8_inputs(node.args[0])
    if inputs is None or len(shape_of(node.args[0])) not in (3, 4):
        return None
    result = node
    if node.target is aten.max_pool2d_with_indices.default:
        user = only_user(node)
        if user is None or not is_getitem(user, 0):
            return None
        result = user
    out = quantized_output(result, fuse_clamp=fuse_clamp)
    (source, in_q), = inputs
    if out is None or (in_q.scale, in_q.zero_point) != (out.qparams.scale, out.qparams.zero_point):
        return None
    return source, in_q, out


def lower_max_pool(editor: GraphEditor, node: Node) -> bool:
    found = _same_quantization(node, fuse_clamp=True)
    if found is None or len(shape_of(node.args[0])) != 4:
        return False
    source, in_q, out = found
    args = list(node.args) + [None] * (6 - len(node.args))
    kernel = _pair(args[1], [1, 1])
    pool_args = (transpose(editor, source, TO_NHWC, out.quantize), kernel, _pair(args[2], kernel),
                 _pair(args[3], [0, 0]), _pair(args[4], [1, 1]), bool(args[5] or False), in_q.zero_point,
                 out.qparams.zero_point, out.activation_min, out.activation_max)
    n, c, h, w = shape_of(out.quantize)
    result = editor.call(op("quantized_max_pool2d_nhwc"), pool_args, meta_tensor((n, h, w, c), torch.int8),
                         before=out.quantize, like=node)
    _nchw_result(editor, result, out)
    return True


def _avg_pool_window(node: Node) -> Optional[tuple[list[int], list[int], list[int], bool, bool]]:
    """kernel, stride, padding, ceil_mode, count_include_pad of an average over windows
    (a mean over the length of a 3-D tensor: over a 1 x length image)."""
    rank = len(shape_of(node.args[0]))
    if rank == 3:
        if node.target is aten.mean.dim and [d % 3 for d in node.args[1]] == [2]:
            length = shape_of(node.args[0])[2]
            return [1, length], [1, length], [0, 0], False, False
        if node.target is aten.mean.dim and [d % 3 for d in node.args[1]] == [1]:
            tokens = shape_of(node.args[0])[1]  # [N, T, C]: NHWC with H = T and W = 1
            return [tokens, 1], [tokens, 1], [0, 0], False, False
        return None
    h, w = shape_of(node.args[0])[2:]
    if node.target is aten.avg_pool2d.default:
        args = list(node.args) + [None] * (7 - len(node.args))
        if args[6] is not None:  # divisor_override
            return None
        kernel = _pair(args[1], [1, 1])
        return (kernel, _pair(args[2], kernel), _pair(args[3], [0, 0]), bool(args[4] or False),
                True if args[5] is None else bool(args[5]))
    if node.target is aten._adaptive_avg_pool2d.default and list(node.args[1]) == [1, 1]:
        return [h, w], [h, w], [0, 0], False, False
    if node.target is aten.mean.dim and sorted(d % 4 for d in node.args[1]) == [2, 3]:
        return [h, w], [h, w], [0, 0], False, False
    return None


def lower_avg_pool(editor: GraphEditor, node: Node) -> bool:
    window = _avg_pool_window(node)
    found = _same_quantization(node, fuse_clamp=False) if window is not None else None
    if found is None:
        return False
    kernel, stride, padding, ceil_mode, count_include_pad = window  # type: ignore[misc]
    if ceil_mode:
        return False
    source, in_q, out = found
    over_tokens = len(shape_of(source)) == 3 and [d % 3 for d in node.args[1]] == [1]  # mean over T of [N, T, C]
    if over_tokens:
        # [N, T, C] holds the bytes of an NHWC [N, T, 1, C]: no transpose.
        n, tokens, channels = shape_of(source)
        nhwc = editor.call(aten.view.default, (source, [n, tokens, 1, channels]),
                           meta_tensor((n, tokens, 1, channels), torch.int8), before=out.quantize)
    elif len(shape_of(source)) == 3:
        n, c, length = shape_of(source)
        source = editor.call(aten.view.default, (source, [n, c, 1, length]), meta_tensor((n, c, 1, length), torch.int8),
                             before=out.quantize)
    if not over_tokens:
        nhwc = transpose(editor, source, TO_NHWC, out.quantize)
    if count_include_pad and padding != [0, 0]:
        # The kernel averages only the taps inside the image; PyTorch counts padding as zeros.
        n, h, w, c = shape_of(nhwc)
        pads = pad_arguments(shape_of(nhwc), [0, padding[0], padding[1], 0], [0, padding[0], padding[1], 0])
        nhwc = editor.call(op("pad"), (nhwc, *pads, in_q.zero_point),
                           meta_tensor((n, h + 2 * padding[0], w + 2 * padding[1], c), torch.int8), before=out.quantize)
        padding = [0, 0]
    multiplier, shift = requantize.quantize_multiplier(in_q.scale)
    n, c = shape_of(nhwc)[0], shape_of(nhwc)[3]
    h, w = [(size + 2 * p - k) // s + 1 for size, p, k, s in zip(shape_of(nhwc)[1:3], padding, kernel, stride)]
    args = (nhwc, kernel, stride, padding, ceil_mode, in_q.zero_point, multiplier, shift,
            editor.scratch(1))
    result = editor.call(op("quantized_avg_pool2d_nhwc"), args, meta_tensor((n, h, w, c), torch.int8),
                         before=out.quantize, like=node)
    if h == w == 1:  # a global pool: [N, 1, 1, C] holds the bytes of [N, C, 1, 1], [N, C] or [N, C, 1]
        shape = shape_of(out.quantize)
        flat = editor.call(aten.view.default, (result, list(shape)), meta_tensor(shape, torch.int8), before=out.quantize)
        out.quantize.replace_all_uses_with(flat)
    else:
        _nchw_result(editor, result, out)
    return True


def lower_softmax(editor: GraphEditor, node: Node) -> bool:
    x, dim, half_to_float = node.args
    inputs = int8_inputs(x)
    out = quantized_output(node, fuse_clamp=False)
    rank = len(shape_of(node))
    if inputs is None or out is None or half_to_float or dim % rank != rank - 1:
        return False
    if abs(out.qparams.scale - 1.0 / 256) > 1e-12 or out.qparams.zero_point != -128:
        return False  # the kernel's output is fixed at scale 1/256, zero point -128
    (source, in_q), = inputs
    multiplier, shift, diff_min = requantize.softmax_parameters(in_q.scale)
    args = (source, rank - 1, in_q.zero_point, -128, multiplier, shift, diff_min)
    result = editor.call(op("softmax"), args, meta_tensor(shape_of(node), torch.int8), before=out.quantize, like=node)
    out.quantize.replace_all_uses_with(result)
    return True


def lower_layer_norm(editor: GraphEditor, node: Node) -> bool:
    """``native_layer_norm`` over the last dim (its normalized result only): Kiln's
    ``kiln::quantized_layer_norm``, which takes the int8 tensor, its qparams, the float
    weight and bias, and quantizes the result itself."""
    x, normalized_shape, w, b, eps = node.args
    users = list(node.users)
    if len(users) != 1 or not is_getitem(users[0], 0) or len(normalized_shape) != 1:
        return False
    inputs = int8_inputs(x)
    out = quantized_output(users[0])
    if inputs is None or out is None or shape_of(x)[-1] != normalized_shape[0]:
        return False
    weight = editor.constant_value(w) if w is not None else None
    bias = editor.constant_value(b) if b is not None else None
    if (w is not None and weight is None) or (b is not None and bias is None):
        return False
    (source, in_q), = inputs
    args = (source, in_q.zero_point, in_q.scale,
            None if weight is None else editor.constant("norm_weight", weight.to(torch.float32)),
            None if bias is None else editor.constant("norm_bias", bias.to(torch.float32)), float(eps),
            out.qparams.zero_point, out.qparams.scale, out.activation_min, out.activation_max)
    result = editor.call(kiln_op("quantized_layer_norm"), args, meta_tensor(shape_of(x), torch.int8),
                         before=out.quantize, like=node)
    out.quantize.replace_all_uses_with(result)
    return True


def lower_batch_matmul(editor: GraphEditor, node: Node) -> bool:
    inputs = int8_inputs(*node.args)
    out = quantized_output(node, fuse_clamp=False)
    if inputs is None or out is None:
        return False
    (a, qa), (b, qb) = inputs
    multiplier, shift = requantize.quantize_multiplier(qa.scale * qb.scale / out.qparams.scale)
    rhs = transpose(editor, b, [0, 2, 1], out.quantize)
    args = (a, -qa.zero_point, rhs, -qb.zero_point, out.qparams.zero_point, multiplier, shift,
            editor.scratch(1))
    result = editor.call(op("quantized_batch_matmul"), args, meta_tensor(shape_of(node), torch.int8),
                         before=out.quantize, like=node)
    out.quantize.replace_all_uses_with(result)
    return True


def pad_arguments(shape: tuple[int, ...], pre: list[int], post: list[int]) -> tuple[list[int], list[int]]:
    """``cortex_m::pad``'s pads, in memory order, from pads per logical dim (4 entries, the
    last ``len(shape)`` used). The kernel takes a 4-D tensor whose dims other than 1 are in
    channels-last order as channels-last (one channel, or one pixel): its pads are then
    given as N, H, W, C."""
    order = [0, 2, 3, 1]
    if len(shape) == 4 and [d for d in order if shape[d] != 1] == [d for d in range(4) if shape[d] != 1]:
        return [pre[d] for d in order], [post[d] for d in order]
    return pre, post


def lower_pad(editor: GraphEditor, node: Node) -> bool:
    x, pad = node.args[:2]
    value = float(node.args[2]) if len(node.args) > 2 else 0.0
    found = int8_inputs(x)
    out = quantized_output(node, fuse_clamp=False)
    rank = len(shape_of(node))
    if found is None or out is None or rank > 4 or len(pad) > 2 * rank:
        return False
    (source, in_q), = found
    if (in_q.scale, in_q.zero_point) != (out.qparams.scale, out.qparams.zero_point) or min(pad) < 0:
        return False
    pre, post = [0] * 4, [0] * 4
    for i in range(len(pad) // 2):  # torch lists the last dim's padding first
        pre[3 - i], post[3 - i] = int(pad[2 * i]), int(pad[2 * i + 1])
    args = (source, *pad_arguments(shape_of(source), pre, post), out.qparams.quantize(value))
    result = editor.call(op("pad"), args, meta_tensor(shape_of(node), torch.int8), before=out.quantize, like=node)
    out.quantize.replace_all_uses_with(result)
    return True


def lower_permute(editor: GraphEditor, node: Node) -> bool:
    found = int8_inputs(node.args[0])
    out = quantized_output(node, fuse_clamp=False)
    if found is None or out is None:
        return False
    (source, in_q), = found
    if (in_q.scale, in_q.zero_point) != (out.qparams.scale, out.qparams.zero_point):
        return False
    rank = len(shape_of(source))
    result = transpose(editor, source, [int(p) % rank for p in node.args[1]], out.quantize)
    result.meta.update({k: v for k, v in node.meta.items() if k != "val"})
    out.quantize.replace_all_uses_with(result)
    return True


def lower_quantize(editor: GraphEditor, node: Node) -> bool:
    if quantize_qparams(node) is None:
        return False
    result = editor.call(op("quantize_per_tensor"), tuple(node.args[:6]), node.meta["val"], before=node, like=node)
    node.replace_all_uses_with(result)
    return True


def lower_dequantize(editor: GraphEditor, node: Node) -> bool:
    if dequantized(node) is None:
        return False
    result = editor.call(op("dequantize_per_tensor"), tuple(node.args[:6]), node.meta["val"], before=node, like=node)
    node.replace_all_uses_with(result)
    return True


Lowering = Callable[[GraphEditor, Node], bool]

#: Operator -> its lowering, tried on every node of the graph in order.
OPERATOR_LOWERINGS: dict[object, Lowering] = {
    aten.convolution.default: lower_convolution,
    aten.addmm.default: lower_linear,
    aten.mm.default: lower_linear,
    aten.add.Tensor: lower_add,
    aten.mul.Tensor: lower_mul,
    aten.max_pool2d_with_indices.default: lower_max_pool,
    aten.max_pool2d.default: lower_max_pool,
    aten.avg_pool2d.default: lower_avg_pool,
    aten._adaptive_avg_pool2d.default: lower_avg_pool,
    aten.mean.dim: lower_avg_pool,
    aten._softmax.default: lower_softmax,
    aten.bmm.default: lower_batch_matmul,
    aten.constant_pad_nd.default: lower_pad,
    aten.permute.default: lower_permute,
    aten.sub.Tensor: lower_sub,
    aten.div.Tensor: lower_div,
    aten.minimum.default: lower_minimum_or_maximum,
    aten.maximum.default: lower_minimum_or_maximum,
    aten.cat.default: lower_cat,
    aten.native_layer_norm.default: lower_layer_norm,
}

#: Lowerings of the quantizes and dequantizes left once the operators are replaced.
BOUNDARY_LOWERINGS: dict[object, Lowering] = {QUANTIZE: lower_quantize, DEQUANTIZE: lower_dequantize}


def lower_nodes(editor: GraphEditor, lowerings: dict[object, Lowering]) -> None:
    for node in list(editor.graph.nodes):
        lowering = lowerings.get(node.target) if node.op == "call_function" else None
        if lowering is not None and node.users and lowering(editor, node):
            logger.debug("%s -> cortex_m", node.name)


def lower_data_movement(editor: GraphEditor, node: Node) -> bool:
    """A view or copy between a dequantize and a quantize of the same qparams: done on the
    int8 tensor (a clone disappears, a view stays a view)."""
    found = int8_inputs(node.args[0])
    out = quantized_output(node, fuse_clamp=False)
    if found is None or out is None:
        return False
    (source, in_q), = found
    if (in_q.scale, in_q.zero_point) != (out.qparams.scale, out.qparams.zero_point):
        return False
    if node.target is aten.clone.default:
        out.quantize.replace_all_uses_with(source)
        return True
    result = editor.call(node.target, (source, *node.args[1:]), meta_tensor(shape_of(node), torch.int8),
                         before=out.quantize, like=node)
    out.quantize.replace_all_uses_with(result)
    return True


OPERATOR_LOWERINGS.update({target: lower_data_movement for target in (
    aten.view.default, aten._unsafe_view.default, aten.clone.default, aten.alias.default, aten.unsqueeze.default,
    aten.squeeze.dims, aten.squeeze.dim)})
