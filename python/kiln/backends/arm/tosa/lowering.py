"""``lower_to_tosa``: one quantized FX subgraph -> one TOSA 1.0 graph.

The subgraph is in PT2E reference form: int8 placeholders, each followed by
``dequantize_per_tensor``; float core-ATen operators; ``quantize_per_tensor`` before
every output; int8 weights as ``get_attr`` + ``dequantize_per_channel``. The walk
binds each node to a :class:`QTensor` or :class:`ConstTensor`; operator lowerings
(``ops/``) consume the float operator together with its fused activations and its
quantize node.
"""

from __future__ import annotations

import logging
import operator
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.context import (
    LoweringContext, TosaLoweringError, VelaLimitError, carries_no_computation, is_dequantize, module_attribute, qd,
    tosa_dtype_of,
)
from kiln.backends.arm.tosa.ops import load_all
from kiln.backends.arm.tosa.ops.activation import lower_table, table_region
from kiln.backends.arm.tosa.ops.constant import fold, is_foldable
from kiln.backends.arm.tosa.ops.reshape import lower_getitem
from kiln.backends.arm.tosa.subgraph import TosaIO, TosaSubgraph
from kiln.backends.arm.tosa.values import ConstTensor, NHWC, QTensor, moves_data
from kiln.backends.arm.tosa.builder import DTYPE_NAMES

logger = logging.getLogger(__name__)

aten = torch.ops.aten


def _io_info(node: torch.fx.Node, value: QTensor, nhwc_io: bool) -> TosaIO:
    move = value.rank == 4 and not nhwc_io and moves_data(value.shape, NHWC)
    dtype = DTYPE_NAMES[value.dtype]
    info = TosaIO(node.name, value.shape, value.tosa_shape, dtype, value.scale, value.zero_point, move, 0)
    return TosaIO(**{**info.__dict__, "transpose_bytes": info.nbytes if move else 0})


class _Walker:
    def __init__(self, ctx: LoweringContext, nhwc_io: bool) -> None:
        self.ctx = ctx
        self.nhwc_io = nhwc_io
        self.registry = load_all()
        self.inputs: list[TosaIO] = []
        self.outputs: list[TosaIO] = []

    def placeholder(self, node: torch.fx.Node) -> None:
        ctx = self.ctx
        fake = node.meta.get("val")
        if fake is None or fake.dtype not in (torch.int8, torch.int16, torch.int32):
            raise ctx.fail(node, f"input must be an int8/int16/int32 tensor (the CPU quantizes at the boundary), "
                                 f"got {getattr(fake, 'dtype', None)}")
        dequantizes = [u for u in node.users if u.target == qd().dequantize_per_tensor.default]
        if not dequantizes and fake.dtype == torch.int32:
            # Integer positions for a GATHER (an embedding's token ids): not quantized.
            value = QTensor("", tuple(int(d) for d in fake.shape), ts.DType.INT32, 1.0, 0)
            value = value.renamed(ctx.builder.add_input(value.tosa_shape, ts.DType.INT32))
            ctx.bind(node, value)
            self.inputs.append(_io_info(node, value, self.nhwc_io))
            return
        if not dequantizes:
            raise ctx.fail(node, "input is not followed by dequantize_per_tensor")
        scale, zero_point = float(dequantizes[0].args[1]), int(dequantizes[0].args[2])
        dtype = tosa_dtype_of(fake.dtype)
        shape = tuple(int(d) for d in fake.shape)
        value = QTensor("", shape, dtype, scale, zero_point)
        value = value.renamed(ctx.builder.add_input(value.tosa_shape, dtype))
        ctx.bind(node, value)
        self.inputs.append(_io_info(node, value, self.nhwc_io))

    def get_attr(self, node: torch.fx.Node) -> None:
        tensor = module_attribute(self.ctx.graph_module, str(node.target))
        if not isinstance(tensor, torch.Tensor):
            raise self.ctx.fail(node, f"attribute {node.target} is a {type(tensor).__name__}, not a tensor")
        self.ctx.bind(node, ConstTensor(tensor.detach().cpu().numpy()))

    def dequantize(self, node: torch.fx.Node) -> None:
        ctx = self.ctx
        source = ctx.value(node.args[0], node)
        if node.target == qd().dequantize_per_channel.default:
            scales = ctx.const(node.args[1], node).data
            zps = None if node.args[2] is None else ctx.const(node.args[2], node).data
            if not isinstance(source, ConstTensor):
                raise ctx.fail(node, "per-channel quantized activations are not lowered")
            ctx.bind(node, ConstTensor(source.data, scales, zps, int(node.args[3]) % source.data.ndim))
            return
        scale, zero_point = float(node.args[1]), int(node.args[2])
        if isinstance(source, ConstTensor):
            ctx.bind(node, ConstTensor(source.data, np.array([scale]), np.array([zero_point]), None))
        else:
            # The dequantize defines the real value of the integer tensor.
            ctx.bind(node, QTensor(source.name, source.shape, source.dtype, scale, zero_point))

    def quantize(self, node: torch.fx.Node) -> None:
        ctx = self.ctx
        source = ctx.value(node.args[0], node)
        scale, zero_point, qmin, qmax, dtype = node.args[1:6]
        if isinstance(source, ConstTensor):
            real = source.dequantized()
            data = np.clip(np.round(real / np.float32(scale)) + zero_point, qmin, qmax)
            stored = {torch.int8: np.int8, torch.int16: np.int16}.get(dtype, np.int32)
            ctx.bind(node, ConstTensor(data.astype(stored),
                                       np.array([scale]), np.array([zero_point]), None))
            return
        ctx.bind(node, ctx.requantize(source, float(scale), int(zero_point), tosa_dtype_of(dtype), node.name))

    def output(self, node: torch.fx.Node) -> None:
        ctx = self.ctx
        results = node.args[0] if isinstance(node.args[0], (list, tuple)) else (node.args[0],)
        marked: set[str] = set()
        input_names = {ctx.values[n].name for n in ctx.values if n.op == "placeholder"}
        for result in results:
            value = ctx.qtensor(result, node)
            if value.name in marked or value.name in input_names:
                # A TOSA tensor can be one graph output only, and not an input too.
                copy = ctx.builder.op(ts.Op.IDENTITY, [value.name], value.tosa_shape, value.dtype, None,
                                      ctx.builder.unique(f"{result.name}_copy"))
                value = value.renamed(copy)
            ctx.builder.mark_output(value.name)
            marked.add(value.name)
            self.outputs.append(_io_info(result, value, self.nhwc_io))

    def call(self, node: torch.fx.Node) -> None:
        ctx = self.ctx
        target = node.target
        if target is operator.getitem:
            lower_getitem(ctx, node)
        elif is_dequantize(node):
            self.dequantize(node)
        elif target == qd().quantize_per_tensor.default:
            self.quantize(node)
        elif carries_no_computation(node):
            return
        else:
            entry = self.registry.get(target)
            if is_foldable(node, ctx.values, "" if entry is None else entry.name):
                folded = fold(node, ctx.values)
                if folded is None:
                    raise ctx.fail(node, "a computation on constants that gives neither a tensor nor a list")
                if isinstance(folded, list):
                    ctx.bind_parts(node, folded)
                else:
                    ctx.bind(node, folded)
                return
            if table_region(node, ctx.compile_spec) is not None:
                lower_table(ctx, node)  # e.g. x + 3 ... / 6 of a decomposed hardswish: one TABLE
                return
            reason = "no TOSA lowering for this operator" if entry is None else entry.check(node, ctx.compile_spec)
            if reason is not None:
                raise ctx.fail(node, reason)
            entry.lower(ctx, node)  # type: ignore[union-attr]

    def walk(self) -> None:
        for node in self.ctx.graph_module.graph.nodes:
            if node in self.ctx.consumed:
                continue
            self.ctx.builder.owner = node.name
            if node.op == "placeholder":
                self.placeholder(node)
            elif node.op == "get_attr":
                self.get_attr(node)
            elif node.op == "call_function":
                self.call(node)
            elif node.op == "output":
                self.output(node)
            elif node.op == "call_module" and str(node.target).startswith("_guards"):
                continue
            else:
                raise self.ctx.fail(node, f"unexpected {node.op} node in a delegated subgraph")


def _tensor_nodes(ctx: LoweringContext) -> dict[str, str]:
    """TOSA tensor name -> the first FX operator node bound to it (its producer), so that
    tools can name a TOSA tensor (and the NPU operation Vela names after it) by layer."""
    names: dict[str, str] = {}
    for node, value in ctx.values.items():
        if isinstance(value, QTensor) and node.op == "call_function":
            names.setdefault(value.name, node.name)
    return names


def lower_to_tosa(
    subgraph: torch.fx.GraphModule,
    compile_spec: Any,
    *,
    nhwc_io: bool = False,
    name: str = "subgraph",
) -> TosaSubgraph:
    """Lowers a quantized, standalone FX subgraph to a TOSA 1.0 (PRO-INT) graph.

    Args:
        subgraph: a GraphModule cut from a quantized core-ATen ExportedProgram in PT2E
            reference form (module docstring). Placeholders are int8 (int16/int32)
            tensors followed by ``dequantize_per_tensor``; outputs are produced by
            ``quantize_per_tensor``; constants are ``get_attr`` nodes;
            ``node.meta["val"]`` holds fake tensors.
        compile_spec: the target (``EthosUCompileSpec``); per-target checks use it.
        nhwc_io: the program's boundary tensors are channels-last already, so no
            boundary transpose is recorded. The TOSA graph is the same either way:
            rank-4 inputs and outputs are NHWC.
        name: subgraph name for errors and logs.

    Returns:
        A :class:`TosaSubgraph` (flatbuffer, boundary tensors, op counts).

    Raises:
        TosaLoweringError: a node cannot be lowered (names the node and the reason).
    """
    ctx = LoweringContext(subgraph, compile_spec, name)
    walker = _Walker(ctx, nhwc_io)
    walker.walk()
    if not walker.outputs:
        raise TosaLoweringError(name, "output", "output", "the subgraph has no outputs")
    flatbuffer = ctx.builder.serialize()
    result = TosaSubgraph(name, flatbuffer, walker.inputs, walker.outputs, dict(ctx.builder.op_counts),
                          nhwc_io, _tensor_nodes(ctx), ctx.builder.operator_owners(flatbuffer))
    logger.debug("%s", result.summary())
    return result


def vela_limits(subgraph: torch.fx.GraphModule, compile_spec: Any, *, name: str = "subgraph") -> list[VelaLimitError]:
    """What Vela would refuse in the TOSA graph of ``subgraph``, each naming the FX node
    whose lowering emits it (:mod:`kiln.backends.arm.tosa.vela_limits`), without running
    Vela. Lowers the whole subgraph (nothing is serialised); raises
    :class:`TosaLoweringError` if a node cannot be lowered at all."""
    ctx = LoweringContext(subgraph, compile_spec, name)
    ctx.vela_limits = []
    _Walker(ctx, False).walk()
    return ctx.vela_limits
