"""One delegated FX subgraph (core ATen, float or PT2E int8) -> an XNNPACK :class:`Graph`.

Quantized graphs arrive in PT2E form (``dequantize -> float op -> quantize``). An
operator XNNPACK runs in int8 whose inputs are dequantized int8 tensors and whose
result (after fused activations) is quantized becomes one int8 node: the
dequantize nodes are dropped and the node writes the quantize node's int8 value.
Everything else runs in fp32; a dequantize or quantize next to it becomes an
``XNNConvert``. The delegate's inputs and outputs are the subgraph's own (fp32,
or int8 where a quantized tensor crosses the boundary); 4-D ones are NHWC, the
caller permutes them (see :class:`kiln.backends.xnnpack.XnnpackPartitioner`).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import torch

from kiln import KilnError
from kiln.delegation.nodes import shape_of
from kiln.backends.xnnpack.graph import (
    INVALID_VALUE_ID, Datatype, Graph, PerChannelQuant, PerTensorQuant,
)
from kiln.backends.xnnpack.operands import (
    DEQUANTIZE_PER_TENSOR, NCHW_TO_NHWC, QUANTIZE_PER_TENSOR, ConstantOperand, constant_operand,
    is_int8_per_tensor, operator_base_name, physical_dims, qparams,
)
from kiln.passes.as_strided import reshape_objection


class XnnpackLoweringError(KilnError):
    """A subgraph has something this lowering cannot express in XNNPACK (node and reason)."""

    def __init__(self, node: str, reason: str) -> None:
        super().__init__(f"XNNPACK lowering of '{node}': {reason}")
        self.node = node
        self.reason = reason


# Activations that become the output clamp of the node before them.
FUSABLE_ACTIVATIONS = ("aten::relu", "aten::hardtanh", "aten::clamp")
BATCH_NORM = "aten::_native_batch_norm_legit_no_training"
# Global average pooling keeps H and W (size 1): newer XNNPACK drops them without this flag,
# the 2022 library always keeps them.
KEEP_DIMS = 0x40
# Operators whose XNNPACK node takes an output clamp.
TAKES_CLAMP = ("aten::convolution", "aten::addmm", "aten::mm", "aten::linear",
               "aten::add", "aten::sub", "aten::mul", "aten::div", BATCH_NORM)
# Operators XNNPACK runs in int8 whose output must have the input's quantization.
KEEPS_QPARAMS = ("aten::max_pool2d_with_indices", "aten::max_pool2d", "aten::view", "aten::reshape",
                 "aten::_unsafe_view", "aten::view_copy", "aten::squeeze", "aten::unsqueeze",
                 "aten::constant_pad_nd", "aten::as_strided", *FUSABLE_ACTIVATIONS)
# Operators XNNPACK runs in int8 with any output quantization.
REQUANTIZES = ("aten::convolution", "aten::addmm", "aten::mm", "aten::linear", "aten::add", "aten::sub",
               "aten::mul", "aten::mean", "aten::_adaptive_avg_pool2d")
BINARY_KINDS = {"aten::add": "XNNAdd", "aten::sub": "XNNSubtract", "aten::mul": "XNNMultiply",
                "aten::div": "XNNDiv"}
UNARY_KINDS = {"aten::sigmoid": "XNNSigmoid", "aten::hardswish": "XNNHardswish"}
ALIASES = ("aten::clone", "aten::alias", "aten::dropout", "aten::_to_copy", "aten::contiguous")
RESHAPES = ("aten::view", "aten::reshape", "aten::_unsafe_view", "aten::view_copy", "aten::squeeze",
            "aten::unsqueeze", "aten::flatten")
# A reshape when it only restrides a row-major tensor (kiln.passes.as_strided.reshape_objection).
AS_STRIDED = "aten::as_strided"


def activation_bounds(node: torch.fx.Node) -> tuple[float, float]:
    """The [min, max] an activation node clamps to."""
    name = operator_base_name(node)
    if name == "aten::relu":
        return 0.0, math.inf
    if name == "aten::hardtanh":
        low = node.args[1] if len(node.args) > 1 else node.kwargs.get("min_val", -1.0)
        high = node.args[2] if len(node.args) > 2 else node.kwargs.get("max_val", 1.0)
        return float(low), float(high)
    low = node.args[1] if len(node.args) > 1 else node.kwargs.get("min")
    high = node.args[2] if len(node.args) > 2 else node.kwargs.get("max")
    return (-math.inf if low is None else float(low)), (math.inf if high is None else float(high))


@dataclass
class Ref:
    """An XNNPACK value holding an FX node's result: its id, PyTorch shape, int8 qparams."""

    id: int
    shape: tuple[int, ...]
    quant: Optional[PerTensorQuant] = None


@dataclass
class Plan:
    """How a node's result is produced: int8 (``quant``) or fp32, the activations fused into
    it (``bounds``), and the FX nodes whose value it also is (fused activations, quantize)."""

    quant: Optional[PerTensorQuant]
    bounds: Optional[tuple[float, float]]
    aliases: list[torch.fx.Node]


def _single_user(node: torch.fx.Node) -> Optional[torch.fx.Node]:
    users = list(node.users)
    return users[0] if len(users) == 1 else None


class Lowering:
    """Lowers one subgraph GraphModule (see :func:`lower_subgraph`)."""

    def __init__(self, graph_module: torch.fx.GraphModule) -> None:
        self.graph_module = graph_module
        self.graph = Graph()
        self.env: dict[torch.fx.Node, Ref] = {}
        self.as_fp32: dict[int, Ref] = {}  # int8 value id -> its fp32 conversion
        self.constants: set[torch.fx.Node] = set()
        self.handlers: dict[str, Callable[[torch.fx.Node], None]] = {
            "aten::convolution": self._convolution, "aten::addmm": self._fully_connected,
            "aten::mm": self._fully_connected, "aten::linear": self._fully_connected,
            "aten::max_pool2d_with_indices": self._max_pool, "aten::max_pool2d": self._max_pool,
            "aten::avg_pool2d": self._avg_pool, "aten::mean": self._global_average,
            "aten::_adaptive_avg_pool2d": self._global_average, "aten::_softmax": self._softmax,
            "aten::softmax": self._softmax, "aten::constant_pad_nd": self._pad,
            BATCH_NORM: self._batch_norm,
            QUANTIZE_PER_TENSOR: self._quantize, DEQUANTIZE_PER_TENSOR: self._dequantize,
            **{name: self._binary for name in BINARY_KINDS},
            **{name: self._unary for name in UNARY_KINDS},
            **{name: self._clamp for name in FUSABLE_ACTIVATIONS},
            **{name: self._reshape for name in RESHAPES},
            **{name: self._alias for name in ALIASES},
            AS_STRIDED: self._as_strided,
        }

    # ------------------------------------------------------------------ driver
    def run(self) -> Graph:
        # Constants first: a node may fold one that comes after it (a batch norm's statistics).
        for node in self.graph_module.graph.nodes:
            if node.op == "get_attr" or (
                node.op == "call_function" and all(n in self.constants for n in node.all_input_nodes)
            ):
                self.constants.add(node)
        for node in self.graph_module.graph.nodes:
            if node in self.constants:
                continue
            if node.op == "placeholder":
                self._input(node)
            elif node.op == "output":
                self._outputs(node)
            elif node in self.env:
                continue
            elif node.target is operator.getitem:
                raise XnnpackLoweringError(node.name, "selects an output XNNPACK does not produce")
            else:
                handler = self.handlers.get(operator_base_name(node))
                if handler is None:
                    raise XnnpackLoweringError(node.name, f"no XNNPACK node for {operator_base_name(node)}")
                handler(node)
        return self.graph

    def _resolve(self, node: torch.fx.Node) -> Optional[torch.Tensor]:
        if node.op == "get_attr":
            return getattr(self.graph_module, str(node.target))
        return None

    def constant(self, node: Any) -> Optional[ConstantOperand]:
        if isinstance(node, torch.fx.Node) and node not in self.constants:
            return None
        return constant_operand(node, self._resolve)

    def _input(self, node: torch.fx.Node) -> None:
        shape = shape_of(node)
        if shape is None:
            raise XnnpackLoweringError(node.name, "an XNNPACK delegate takes tensors only")
        value = node.meta["val"]
        if value.dtype == torch.float32:
            ref = self._new_value(shape, None)
        elif value.dtype == torch.int8:
            readers = [u for u in node.users if is_int8_per_tensor(u, DEQUANTIZE_PER_TENSOR)]
            if not readers:
                raise XnnpackLoweringError(node.name, "an int8 input must be dequantized per tensor")
            ref = self._new_value(shape, PerTensorQuant(*qparams(readers[0])))
        else:
            raise XnnpackLoweringError(node.name, f"XNNPACK inputs are fp32 or int8, not {value.dtype}")
        self.graph.mark_input(ref.id)
        self.env[node] = ref

    def _outputs(self, node: torch.fx.Node) -> None:
        marked: set[int] = set()
        for produced in node.args[0]:
            ref = self.env.get(produced)
            if ref is None:
                raise XnnpackLoweringError(produced.name, "returns a constant")
            if ref.quant is not None and produced.meta["val"].dtype == torch.float32:
                ref = self.fp32(produced)  # a dequantized output
            if ref.id in marked or ref.id in self.graph.input_ids:
                raise XnnpackLoweringError(produced.name, "returns an input or another output unchanged")
            marked.add(ref.id)
            self.graph.mark_output(ref.id)

    # ------------------------------------------------------------------ values
    def _new_value(self, shape: tuple[int, ...], quant: Optional[PerTensorQuant]) -> Ref:
        datatype = Datatype.FP32 if quant is None else Datatype.QINT8
        return Ref(self.graph.add_value(datatype, physical_dims(shape), quant), tuple(shape), quant)

    def _constant_value(self, data: torch.Tensor, datatype: Datatype, quant: Any = None) -> int:
        numpy_type = {Datatype.FP32: np.float32, Datatype.QCINT8: np.int8, Datatype.QINT8: np.int8,
                      Datatype.QCINT32: np.int32, Datatype.QINT32: np.int32}[datatype]
        array = np.ascontiguousarray(data.detach().cpu().numpy().astype(numpy_type))
        return self.graph.add_value(datatype, tuple(array.shape) or (1,), quant, array.tobytes())

    def fp32(self, node: torch.fx.Node) -> Ref:
        """The node's value in fp32 (an int8 value is converted once, on first use)."""
        ref = self.env[node]
        if ref.quant is None:
            return ref
        if ref.id not in self.as_fp32:
            converted = self._new_value(ref.shape, None)
            self.graph.add_node("XNNConvert", input_id=ref.id, output_id=converted.id, flags=0)
            self.as_fp32[ref.id] = converted
        return self.as_fp32[ref.id]

    def _operand(self, node: torch.fx.Node, quantized: bool) -> Ref:
        return self.env[node] if quantized else self.fp32(node)

    # ------------------------------------------------------------------ int8 or fp32
    def plan(self, node: torch.fx.Node, inputs: list[torch.fx.Node], *, result: Optional[torch.fx.Node] = None) -> Plan:
        """Decides int8 or fp32 for ``node`` (whose value ``result`` holds, default itself)."""
        name = operator_base_name(node)
        result = result or node
        fuses = name in TAKES_CLAMP
        aliases: list[torch.fx.Node] = []
        bounds: Optional[tuple[float, float]] = None
        last = result
        while fuses and (user := _single_user(last)) is not None and operator_base_name(user) in FUSABLE_ACTIVATIONS:
            low, high = activation_bounds(user)
            bounds = (max(low, bounds[0]), min(high, bounds[1])) if bounds else (low, high)
            aliases.append(user)
            last = user
        if name in FUSABLE_ACTIVATIONS:
            bounds = activation_bounds(node)
        quant = self._int8_result(name, inputs, last)
        if quant is not None:
            aliases.append(_single_user(last))  # type: ignore[arg-type]
        return Plan(quant, bounds, aliases)

    def _int8_result(self, name: str, inputs: list[torch.fx.Node], last: torch.fx.Node) -> Optional[PerTensorQuant]:
        if name not in KEEPS_QPARAMS and name not in REQUANTIZES:
            return None
        quantize = _single_user(last)
        if quantize is None or not is_int8_per_tensor(quantize, QUANTIZE_PER_TENSOR):
            return None
        if not inputs or not all(is_int8_per_tensor(n, DEQUANTIZE_PER_TENSOR) and self.env[n].quant
                                 for n in inputs):
            return None
        quant = PerTensorQuant(*qparams(quantize))
        if name in KEEPS_QPARAMS and self.env[inputs[0]].quant != quant:
            return None
        return quant

    def _result(self, node: torch.fx.Node, plan: Plan, shape: Optional[tuple[int, ...]] = None) -> Ref:
        ref = self._new_value(shape or shape_of(node), plan.quant)  # type: ignore[arg-type]
        self.env[node] = ref
        for alias in plan.aliases:
            self.env[alias] = ref
        return ref

    # ------------------------------------------------------------------ operators
    def _quantize(self, node: torch.fx.Node) -> None:
        source = node.args[0]
        quant = PerTensorQuant(*qparams(node))
        if self.env[source].quant == quant:
            self.env[node] = self.env[source]
            return
        ref = self._new_value(shape_of(node), quant)  # type: ignore[arg-type]
        self.graph.add_node("XNNConvert", input_id=self.fp32(source).id, output_id=ref.id, flags=0)
        self.env[node] = ref

    def _dequantize(self, node: torch.fx.Node) -> None:
        source = self.env[node.args[0]]
        if source.quant != PerTensorQuant(*qparams(node)):
            raise XnnpackLoweringError(node.name, "dequantizes with other qparams than its input has")
        self.env[node] = source

    def _alias(self, node: torch.fx.Node) -> None:
        self.env[node] = self.env[node.args[0]]

    def _convolution(self, node: torch.fx.Node) -> None:
        source, weight_node, bias_node, stride, padding, dilation, transposed, _, groups = node.args
        weight = self.constant(weight_node)
        bias = self.constant(bias_node) if bias_node is not None else None
        if weight is None or transposed or len(stride) != 2 or (bias_node is not None and bias is None):
            raise XnnpackLoweringError(node.name, "needs a 2-D, non-transposed convolution with constant weights")
        result, norm = node, _single_user(node)
        folded = self._batch_norm_affine(norm) if norm is not None else None
        if folded is not None:
            # Batch norm after a convolution: scale its weights and bias instead.
            result, (scale, shift) = batch_norm_output(norm), folded  # type: ignore[arg-type]
            self.env[norm] = Ref(INVALID_VALUE_ID, ())  # type: ignore[index]
            weight = ConstantOperand(weight.as_float() * scale.reshape(-1, 1, 1, 1))
            old_bias = bias.as_float() if bias is not None else torch.zeros_like(shift)
            bias = ConstantOperand(old_bias * scale + shift)
        plan = self.plan(node, [source], result=result)
        quantized = plan.quant is not None and weight.quantized
        if not quantized:
            plan = self.plan_fp32(plan)
        x = self._operand(source, quantized)
        out_channels, group_in, kernel_h, kernel_w = weight.data.shape
        depthwise = group_in == 1 and groups > 1 and groups == x.shape[1]
        order = [1, 2, 3, 0] if depthwise else [0, 2, 3, 1]
        filter_id = self._weight(weight.permute(order), quantized, 3 if depthwise else 0, out_channels)
        bias_id = self._bias(bias, weight, x, out_channels) if bias is not None else INVALID_VALUE_ID
        out = self._result(result, plan)
        self.graph.add_node(
            "XNNDepthwiseConv2d" if depthwise else "XNNConv2d", output_min_max=plan.bounds,
            padding_top=padding[0], padding_right=padding[1], padding_bottom=padding[0], padding_left=padding[1],
            kernel_height=kernel_h, kernel_width=kernel_w, subsampling_height=stride[0], subsampling_width=stride[1],
            dilation_height=dilation[0], dilation_width=dilation[1], group_input_channels=group_in,
            group_output_channels=out_channels // groups, groups=groups, adjustment_height=0, adjustment_width=0,
            input1_id=x.id, filter_id=filter_id, bias_id=bias_id, output_id=out.id, flags=0,
        )

    @staticmethod
    def plan_fp32(plan: Plan) -> Plan:
        """``plan`` without int8: the quantize after the node becomes a conversion."""
        if plan.quant is None:
            return plan
        return Plan(None, plan.bounds, plan.aliases[:-1])

    def _weight(self, weight: ConstantOperand, quantized: bool, channel_dim: int, channels: int) -> int:
        if not quantized:
            return self._constant_value(weight.as_float(), Datatype.FP32)
        if weight.zero_points is not None and bool((weight.zero_points != 0).any()):
            raise XnnpackLoweringError("weight", "XNNPACK int8 weights are symmetric (zero point 0)")
        scales = tuple(float(s) for s in weight.channel_scales(channels))
        return self._constant_value(weight.data, Datatype.QCINT8, PerChannelQuant(scales, channel_dim))

    def _bias(self, bias: ConstantOperand, weight: ConstantOperand, x: Ref, channels: int) -> int:
        if x.quant is None or not weight.quantized:
            return self._constant_value(bias.as_float(), Datatype.FP32)
        scales = weight.channel_scales(channels).double() * x.quant.scale
        data = torch.round(bias.as_float().double() / scales).clamp(-(2**31), 2**31 - 1).to(torch.int32)
        return self._constant_value(data, Datatype.QCINT32, PerChannelQuant(tuple(float(s) for s in scales), 0))

    def _fully_connected(self, node: torch.fx.Node) -> None:
        name = operator_base_name(node)
        if name == "aten::addmm":
            bias_node, source, matrix = node.args[:3]
            weight = self.constant(matrix)
            weight = weight.permute([1, 0]) if weight is not None else None
        elif name == "aten::mm":
            bias_node, (source, matrix) = None, node.args[:2]
            weight = self.constant(matrix)
            weight = weight.permute([1, 0]) if weight is not None else None
        else:
            source, weight_node = node.args[:2]
            bias_node = node.args[2] if len(node.args) > 2 else None
            weight = self.constant(weight_node)
        bias = self.constant(bias_node) if bias_node is not None else None
        if weight is None or (bias_node is not None and bias is None):
            raise XnnpackLoweringError(node.name, "needs constant weights and bias")
        plan = self.plan(node, [source])
        quantized = plan.quant is not None and weight.quantized
        if not quantized:
            plan = self.plan_fp32(plan)
        x = self._operand(source, quantized)
        out_channels = weight.data.shape[0]
        filter_id = self._weight(weight, quantized, 0, out_channels)
        bias_id = self._bias(bias, weight, x, out_channels) if bias is not None else INVALID_VALUE_ID
        out = self._result(node, plan)
        self.graph.add_node("XNNFullyConnected", output_min_max=plan.bounds, input1_id=x.id,
                            filter_id=filter_id, bias_id=bias_id, output_id=out.id, flags=0)

    def _binary(self, node: torch.fx.Node) -> None:
        if node.kwargs.get("alpha", 1) != 1:
            raise XnnpackLoweringError(node.name, "add/sub with alpha != 1")
        tensors = [a for a in node.args[:2] if isinstance(a, torch.fx.Node) and a not in self.constants]
        if len(tensors) == 1:
            self._binary_with_constant(node, tensors[0])
            return
        plan = self.plan(node, tensors)
        quantized = plan.quant is not None
        ids = [self._operand(a, quantized).id for a in node.args[:2]]
        out = self._result(node, plan)
        self.graph.add_node(BINARY_KINDS[operator_base_name(node)], output_min_max=plan.bounds,
                            input1_id=ids[0], input2_id=ids[1], output_id=out.id, flags=0)

    def _binary_with_constant(self, node: torch.fx.Node, tensor: torch.fx.Node) -> None:
        """``x op c`` with a per-channel (or scalar) constant ``c``, as a 1x1 depthwise
        convolution: its constants are packed weights. (ExecuTorch's runtime frees the
        payload after init, so a constant an elementwise node reads would dangle.)"""
        name = operator_base_name(node)
        first = node.args[0] is tensor
        other = node.args[1] if first else node.args[0]
        channels = shape_of(node)[1]  # type: ignore[index]
        if isinstance(other, torch.fx.Node):
            value = self.constant(other).as_float()  # type: ignore[union-attr]
        else:
            value = torch.tensor(float(other))
        value = value.reshape(-1).expand(channels) if value.numel() == 1 else value.reshape(-1)
        ones, zeros = torch.ones(channels), torch.zeros(channels)
        scale, shift = {
            "aten::add": (ones, value), "aten::mul": (value, zeros), "aten::div": (1.0 / value, zeros),
            "aten::sub": (ones, -value) if first else (-ones, value),
        }[name]
        self._channel_affine(node, tensor, scale, shift, node)

    def _channel_affine(self, node: torch.fx.Node, source: torch.fx.Node, scale: torch.Tensor,
                        shift: torch.Tensor, result: torch.fx.Node) -> None:
        plan = self.plan_fp32(self.plan(node, [source], result=result))
        x = self.fp32(source)
        channels = int(scale.numel())
        filter_id = self._constant_value(scale.reshape(1, 1, 1, channels), Datatype.FP32)
        bias_id = self._constant_value(shift.reshape(channels), Datatype.FP32)
        out = self._result(result, plan)
        self.graph.add_node(
            "XNNDepthwiseConv2d", output_min_max=plan.bounds, padding_top=0, padding_right=0, padding_bottom=0,
            padding_left=0, kernel_height=1, kernel_width=1, subsampling_height=1, subsampling_width=1,
            dilation_height=1, dilation_width=1, group_input_channels=1, group_output_channels=1, groups=channels,
            adjustment_height=0, adjustment_width=0, input1_id=x.id, filter_id=filter_id, bias_id=bias_id,
            output_id=out.id, flags=0,
        )

    def _batch_norm_affine(self, node: torch.fx.Node) -> Optional[tuple[torch.Tensor, torch.Tensor]]:
        """(scale, shift) per channel of an inference batch norm with constant statistics."""
        if operator_base_name(node) != BATCH_NORM:
            return None
        weight, bias, mean, variance = (self.constant(a) if a is not None else None for a in node.args[1:5])
        if mean is None or variance is None:
            return None
        scale = 1.0 / torch.sqrt(variance.as_float() + float(node.args[6]))
        if weight is not None:
            scale = scale * weight.as_float()
        shift = -mean.as_float() * scale + (bias.as_float() if bias is not None else 0.0)
        return scale, shift

    def _batch_norm(self, node: torch.fx.Node) -> None:
        affine = self._batch_norm_affine(node)
        if affine is None:
            raise XnnpackLoweringError(node.name, "a batch norm with statistics computed at run time")
        self.env[node] = Ref(INVALID_VALUE_ID, ())
        self._channel_affine(node, node.args[0], affine[0], affine[1], batch_norm_output(node))

    def _unary(self, node: torch.fx.Node) -> None:
        plan = self.plan(node, [node.args[0]])
        x = self.fp32(node.args[0])
        out = self._result(node, plan)
        self.graph.add_node(UNARY_KINDS[operator_base_name(node)], input_id=x.id, output_id=out.id, flags=0)

    def _clamp(self, node: torch.fx.Node) -> None:
        plan = self.plan(node, [node.args[0]])
        x = self._operand(node.args[0], plan.quant is not None)
        out = self._result(node, plan)
        self.graph.add_node("XNNClamp", output_min_max=plan.bounds, input_id=x.id, output_id=out.id, flags=0)

    def _softmax(self, node: torch.fx.Node) -> None:
        plan = self.plan(node, [node.args[0]])
        x = self.fp32(node.args[0])
        out = self._result(node, plan)
        self.graph.add_node("XNNSoftmax", input_id=x.id, output_id=out.id, flags=0)

    def _pooling_params(self, node: torch.fx.Node, defaults: tuple) -> dict[str, int]:
        arguments = list(node.args[1:]) + list(defaults[len(node.args) - 1:])
        kernel, stride, padding = (_pair(v) for v in arguments[:3])
        stride = stride or kernel
        return dict(padding_top=padding[0], padding_right=padding[1], padding_bottom=padding[0],
                    padding_left=padding[1], pooling_height=kernel[0], pooling_width=kernel[1],
                    stride_height=stride[0], stride_width=stride[1])

    def _max_pool(self, node: torch.fx.Node) -> None:
        params = self._pooling_params(node, ((), (), 0, 1, False))
        dilation = _pair(node.args[4] if len(node.args) > 4 else 1)
        result = node
        if operator_base_name(node) == "aten::max_pool2d_with_indices":
            result = next(u for u in node.users if u.args[1] == 0)
        plan = self.plan(node, [node.args[0]], result=result)
        x = self._operand(node.args[0], plan.quant is not None)
        out = self._result(result, plan)
        self.graph.add_node("XNNMaxPooling2d", **params, dilation_height=dilation[0], dilation_width=dilation[1],
                            input_id=x.id, output_id=out.id, flags=0)

    def _avg_pool(self, node: torch.fx.Node) -> None:
        params = self._pooling_params(node, ((), (), 0, False, True, None))
        plan = self.plan(node, [node.args[0]])
        x = self.fp32(node.args[0])
        out = self._result(node, plan)
        self.graph.add_node("XNNAvgPooling2d", **params, dilation_height=1, dilation_width=1,
                            input_id=x.id, output_id=out.id, flags=0)

    def _global_average(self, node: torch.fx.Node) -> None:
        plan = self.plan(node, [node.args[0]])
        x = self._operand(node.args[0], plan.quant is not None)
        shape = shape_of(node)
        pooled_shape = (x.shape[0], x.shape[1], 1, 1)
        if shape == pooled_shape:
            out = self._result(node, plan)
            self.graph.add_node("XNNGlobalAvgPooling2d", input_id=x.id, output_id=out.id, flags=KEEP_DIMS)
            return
        pooled = self._new_value(pooled_shape, plan.quant)
        self.graph.add_node("XNNGlobalAvgPooling2d", input_id=x.id, output_id=pooled.id, flags=KEEP_DIMS)
        out = self._result(node, plan)
        dims = physical_dims(shape)  # type: ignore[arg-type]
        self.graph.add_node("XNNStaticReshape", num_dims=len(dims), new_shape=list(dims),
                            input_id=pooled.id, output_id=out.id, flags=0)

    def _reshape(self, node: torch.fx.Node) -> None:
        plan = self.plan(node, [node.args[0]])
        x = self._operand(node.args[0], plan.quant is not None)
        out = self._result(node, plan)
        dims = physical_dims(out.shape)
        self.graph.add_node("XNNStaticReshape", num_dims=len(dims), new_shape=list(dims),
                            input_id=x.id, output_id=out.id, flags=0)

    def _as_strided(self, node: torch.fx.Node) -> None:
        reason = reshape_objection(node)
        if reason is not None:
            raise XnnpackLoweringError(node.name, reason)
        self._reshape(node)

    def _pad(self, node: torch.fx.Node) -> None:
        pads = list(node.args[1])
        value = float(node.args[2]) if len(node.args) > 2 else 0.0
        plan = self.plan(node, [node.args[0]])
        x = self._operand(node.args[0], plan.quant is not None)
        rank = len(x.shape)
        before, after = [0] * rank, [0] * rank
        for index in range(len(pads) // 2):
            before[rank - 1 - index], after[rank - 1 - index] = pads[2 * index], pads[2 * index + 1]
        if rank == 4:
            before, after = [before[i] for i in NCHW_TO_NHWC], [after[i] for i in NCHW_TO_NHWC]
        out = self._result(node, plan)
        self.graph.add_node("XNNStaticConstantPad", pre_paddings=before, post_paddings=after, padding_value=value,
                            input_id=x.id, output_id=out.id, flags=0)


def batch_norm_output(node: torch.fx.Node) -> torch.fx.Node:
    """The ``getitem`` selecting a batch norm's normalized output."""
    return next(u for u in node.users if u.target is operator.getitem and u.args[1] == 0)


def _pair(value: Any) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value, value)
    values = tuple(int(v) for v in value)
    return values * 2 if len(values) == 1 else values


def lower_subgraph(graph_module: torch.fx.GraphModule) -> Graph:
    """The XNNPACK graph computing ``graph_module`` (a subgraph from
    :func:`kiln.passes.delegation.extract_subgraph`)."""
    return Lowering(graph_module).run()
