"""Which operators the Ethos-U runs with 16-bit activations, and what the others keep.

A 16-bit (a16w8) config asks for int16 activations. The Ethos-U lowering computes these
operators in 16 bits, and Vela compiles them for every Ethos-U (U55, U65, U85):

* convolutions (1-D, 2-D, depthwise) and fully connected layers: int16 x int8 with a
  48-bit accumulator (TOSA's INT48; the U85 accumulates in 64 bits) and 16-bit output
  multipliers;
* add / sub / mul: operands rescaled to int32 (15 bits of headroom instead of int8's 20);
* average pooling and means, max pooling, clamps (relu, relu6, hardtanh), and the
  operators that only move values (views, permutes, slices, padding, concatenation);
* smooth pointwise functions of one tensor (sigmoid, tanh, GELU, SiLU, hardswish,
  hardsigmoid, ELU, leaky ReLU, 1 - x, products with a number): TOSA's interpolated
  513-entry int16 TABLE (tosa/ops/table16.py), which Vela compiles to the NPU's 16-bit
  lookup on every Ethos-U.

Everything else keeps int8 activations (the int8 config of the same layer) with a reason,
so that nothing is silently computed at a precision the user did not get: steep table
functions (exp, log, reciprocal, rsqrt: a line over 128 input codes misses their curve),
softmax and layer norm (their integer decompositions are written for int8 inputs),
transposed convolutions, matrix products of two computed tensors, resizes, gathers.
PT2E inserts the requantization between an int16 producer and an int8 consumer (and the
reverse), which the lowering emits as a RESCALE; a 16-bit convolution or linear layer reads
an int8 producer as it is (annotator.GraphAnnotator.input_spec), and an operator of the
model's own forward with a 16-bit operand (a residual add after a 16-bit block) computes in
16 bits (EthosUQuantizer), so that precision changes cost as few NPU passes as possible and
a residual stream stays 16-bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.fx import Node

from kiln.delegation.quantizer import patterns
from kiln.delegation.quantizer.config import QuantizationConfig, get_symmetric_quantization_config, is_int16

aten = torch.ops.aten

# Table functions whose curve a line over 128 input codes misses (module docstring).
_STEEP_TABLES = {aten.exp.default, aten.log.default, aten.reciprocal.default, aten.rsqrt.default}

#: Operators the Ethos-U lowering computes with int16 activations (module docstring).
INT16_OPERATORS = (
    {aten.conv1d.default, aten.conv1d.padding, aten.conv2d.default, aten.conv2d.padding, aten.linear.default}
    | {aten.add.Tensor, aten.add_.Tensor, aten.sub.Tensor, aten.sub_.Tensor, aten.mul.Tensor, aten.mul_.Tensor}
    | patterns.AVERAGE | patterns.SHARED | patterns.CONCAT | patterns.SUM | patterns.TABLE
) - _STEEP_TABLES - {aten.upsample_bilinear2d.vec, aten.upsample_bilinear2d.default,
     aten.upsample_nearest2d.default, aten.upsample_nearest2d.vec}

_WHY_INT8 = [
    (_STEEP_TABLES, "a steep lookup-table function: a 16-bit table interpolates over 128 input codes"),
    (patterns.SOFTMAX, "softmax's integer decomposition is written for int8 inputs"),
    (patterns.NORMALIZATION, "the normalization's integer decomposition is written for int8 inputs"),
    (patterns.OUTPUT_CHANNELS_AXIS_1, "transposed convolutions are lowered for int8 inputs only"),
    ({aten.matmul.default, aten.bmm.default, aten.mm.default},
     "a product of two computed tensors is lowered for int8 inputs only"),
    (patterns.GATHER, "a gather reads an int8 table"),
    ({aten.upsample_bilinear2d.vec, aten.upsample_bilinear2d.default,
      aten.upsample_nearest2d.default, aten.upsample_nearest2d.vec}, "resizes are lowered for int8 inputs only"),
]


@dataclass(frozen=True)
class KeptInt8:
    """An operator a 16-bit config covered that keeps int8 activations, and why."""

    node: str
    operator: str
    module: str
    reason: str

    def __str__(self) -> str:
        where = f", in {self.module}" if self.module else ""
        return f"{self.node} ({self.operator}{where}) kept int8 activations: {self.reason}"


def _float_tensor(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _computes_on_activations(node: Node) -> bool:
    """True for an operator that maps activations to one activation tensor: what the
    annotator quantizes. Splits (a list result picked by getitem) and constants made from
    nothing (zeros) carry no quantization of their own."""
    if not isinstance(node.target, torch._ops.OpOverload) or not _float_tensor(node.meta.get("val")):
        return False
    return any(_float_tensor(a.meta.get("val")) and a.op != "get_attr" for a in node.all_input_nodes)


def why_not_int16(node: Node) -> str | None:
    """None if ``node`` computes in 16 bits on the Ethos-U (or has no activations to
    quantize), else why it keeps int8."""
    if not _computes_on_activations(node):
        return None
    if node.target in INT16_OPERATORS:
        return None
    activations = [a for a in node.all_input_nodes if _float_tensor(a.meta.get("val")) and a.op != "get_attr"]
    if torch.Tag.pointwise in getattr(node.target, "tags", ()) and len(activations) == 1 \
            and node.target not in _STEEP_TABLES:
        return None  # a function of one tensor: a 16-bit table (tosa/ops/table16.py)
    for group, reason in _WHY_INT8:
        if node.target in group:
            return reason
    return "no 16-bit lowering for this operator"


def _module_of(node: Node) -> str:
    stack = list((node.meta.get("nn_module_stack") or {}).values())
    return str(stack[-1][0]) if stack else ""


class PrecisionChooser:
    """Gives each node the config it runs with: 16-bit configs fall back to int8 where the
    operator has no 16-bit lowering, and each fallback is recorded in :attr:`kept_int8`."""

    def __init__(self) -> None:
        self._kept: dict[str, KeptInt8] = {}
        self._fallbacks: dict[int, QuantizationConfig] = {}

    def __call__(self, node: Node, config: QuantizationConfig | None) -> QuantizationConfig | None:
        if not is_int16(config):
            return config
        assert config is not None
        reason = why_not_int16(node)
        if reason is None:
            return config
        self._kept.setdefault(node.name, KeptInt8(node.name, str(node.target), _module_of(node), reason))
        return self._int8_of(config)

    @property
    def kept_int8(self) -> list[KeptInt8]:
        return list(self._kept.values())

    def _int8_of(self, config: QuantizationConfig) -> QuantizationConfig:
        """One int8 config per 16-bit config (annotation compares configs by identity)."""
        key = id(config)
        if key not in self._fallbacks:
            per_channel = config.weight.qscheme in (torch.per_channel_symmetric, torch.per_channel_affine)
            self._fallbacks[key] = get_symmetric_quantization_config(per_channel=per_channel, is_qat=config.is_qat)
        return self._fallbacks[key]
