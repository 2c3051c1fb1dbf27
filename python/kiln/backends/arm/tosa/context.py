"""State shared by the op lowerings while one FX subgraph becomes one TOSA graph."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln import KilnError
from kiln.backends.arm.tosa.builder import TosaBuilder
from kiln.passes.constant_values import ConstantEvaluator
from kiln.backends.arm.tosa.ops.rescale import emit_clamp, emit_rescale, requantize
from kiln.backends.arm.tosa.values import ConstTensor, QTensor, canonical_perm
from kiln.passes.activations import activation_range
from kiln.passes.as_strided import reshape_objection

_qd = None


def qd() -> Any:
    """``torch.ops.quantized_decomposed`` (registered by torchao's PT2E import)."""
    global _qd
    if _qd is None:
        if not hasattr(torch.ops.quantized_decomposed, "quantize_per_tensor"):
            import torchao.quantization.pt2e  # noqa: F401  (registers the ops)
        _qd = torch.ops.quantized_decomposed
    return _qd


def is_quantize(node: Any) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in (
        qd().quantize_per_tensor.default,
    )


def is_dequantize(node: Any) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in (
        qd().dequantize_per_tensor.default, qd().dequantize_per_channel.default,
    )


# Nodes that carry no computation in an exported graph.
_NO_COMPUTATION = {"_assert_tensor_metadata", "sym_size", "_assert_scalar", "sym_constrain_range_for_size"}


def carries_no_computation(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and getattr(node.target, "__name__", "").split(".")[0] in _NO_COMPUTATION


_TORCH_TO_TOSA = {torch.int8: ts.DType.INT8, torch.int16: ts.DType.INT16, torch.int32: ts.DType.INT32}


def tosa_dtype_of(dtype: torch.dtype) -> ts.DType:
    return _TORCH_TO_TOSA[dtype]


class TosaLoweringError(KilnError):
    """A node of a delegated subgraph cannot be lowered to TOSA.

    Attributes:
        node: FX node name; reason: why (also in the message).
    """

    def __init__(self, subgraph: str, node: str, target: str, reason: str) -> None:
        super().__init__(f"subgraph {subgraph!r}: cannot lower node {node!r} ({target}) to TOSA: {reason}")
        self.subgraph = subgraph
        self.node = node
        self.reason = reason


class VelaLimitError(TosaLoweringError):
    """What the lowering emits for a node is an operation Vela refuses for the target
    (:mod:`kiln.backends.arm.tosa.vela_limits`): known before Vela runs, so the
    partitioner leaves the node on the CPU with this reason instead of trying Vela."""


_VIEW_TARGETS = {
    torch.ops.aten.view.default, torch.ops.aten._unsafe_view.default, torch.ops.aten.reshape.default,
    torch.ops.aten.view_copy.default, torch.ops.aten.flatten.using_ints, torch.ops.aten.squeeze.dims,
    torch.ops.aten.squeeze.dim, torch.ops.aten.unsqueeze.default,
}


def is_view(node: torch.fx.Node) -> bool:
    """True if ``node`` only gives its input another shape: a view, or an ``as_strided``
    that restrides a row-major tensor without reordering it."""
    if node.target in _VIEW_TARGETS:
        return True
    return node.target is torch.ops.aten.as_strided.default and reshape_objection(node) is None


@dataclass
class OutputQuant:
    """Where a float operator's result is quantized, and what clamps it on the way."""

    node: torch.fx.Node  # the quantize_per_tensor node
    scale: float
    zero_point: int
    dtype: ts.DType
    qmin: int
    qmax: int
    low: float | None = None  # fused activation range (float)
    high: float | None = None
    chain: list[torch.fx.Node] = field(default_factory=list)

    def quantized(self, value: float) -> int:
        """``value`` as torch's quantize_per_tensor computes it (float32, half to even)."""
        q = np.round(np.float32(value) * (np.float32(1.0) / np.float32(self.scale))) + self.zero_point
        return int(min(max(q, self.qmin), self.qmax))

    def int_range(self) -> tuple[int, int]:
        low = self.qmin if self.low is None else max(self.qmin, self.quantized(self.low))
        high = self.qmax if self.high is None else min(self.qmax, self.quantized(self.high))
        return low, high


def find_output_quant(node: torch.fx.Node) -> tuple[OutputQuant | None, str]:
    """(where ``node``'s result is quantized, "") following its single user through views and
    fused activations, or (None, why not)."""
    chain: list[torch.fx.Node] = []
    low: float | None = None
    high: float | None = None
    current = node
    while True:
        users = list(current.users)
        if len(users) != 1:
            return None, (f"result has {len(users)} users; expected exactly one quantize node "
                          "(is the graph quantized with PT2E reference q/dq nodes?)")
        user = users[0]
        if is_quantize(user):
            break
        if is_view(user) and user.args[0] is current:
            chain.append(user)  # e.g. addmm -> view -> quantize (linear on rank-3 input)
            current = user
            continue
        fused = activation_range(user)
        if fused is None or user.args[0] is not current:
            return None, f"result feeds {user.target} instead of a quantize node"
        low = fused[0] if low is None else (low if fused[0] is None else max(low, fused[0]))
        high = fused[1] if high is None else (high if fused[1] is None else min(high, fused[1]))
        chain.append(user)
        current = user
    scale, zero_point, qmin, qmax, dtype = user.args[1:6]
    return OutputQuant(user, float(scale), int(zero_point), tosa_dtype_of(dtype), int(qmin), int(qmax),
                       low, high, chain), ""


def module_attribute(module: torch.nn.Module, path: str) -> Any:
    """``module.a.b`` for path ``"a.b"`` (what a ``get_attr`` node reads)."""
    value: Any = module
    for part in path.split("."):
        value = getattr(value, part)
    return value


class LoweringContext:
    """Maps FX nodes to TOSA values and gives op lowerings their common helpers."""

    def __init__(self, graph_module: torch.fx.GraphModule, compile_spec: Any, name: str) -> None:
        self.graph_module = graph_module
        self.compile_spec = compile_spec
        self.name = name
        self.builder = TosaBuilder()
        self.values: dict[torch.fx.Node, QTensor | ConstTensor] = {}
        # Results of multi-output operators (split), picked by their getitem nodes.
        self.parts: dict[torch.fx.Node, list[QTensor | ConstTensor]] = {}
        self.consumed: set[torch.fx.Node] = set()
        # Values of nodes computed from constants only, on demand (index arithmetic ...).
        self.constants = ConstantEvaluator(self._constant_leaf)
        # When a list: what Vela would refuse is recorded here and the lowering goes on
        # (the partitioner's check of a whole partition); else it raises at once.
        self.vela_limits: list[VelaLimitError] | None = None

    def _constant_leaf(self, node: torch.fx.Node) -> torch.Tensor | None:
        if node.op != "get_attr":
            return None
        value = module_attribute(self.graph_module, str(node.target))
        return value if isinstance(value, torch.Tensor) else None

    # ------------------------------------------------------------------ errors
    def fail(self, node: torch.fx.Node, reason: str) -> TosaLoweringError:
        return TosaLoweringError(self.name, node.name, str(node.target), reason)

    def refuse_for_vela(self, reason: str) -> None:
        """Vela would refuse what the node being lowered (the builder's owner) emits:
        raises :class:`VelaLimitError`, or records it when collecting."""
        owner = next((n for n in self.graph_module.graph.nodes if n.name == self.builder.owner), None)
        error = VelaLimitError(self.name, self.builder.owner, "" if owner is None else str(owner.target), reason)
        if self.vela_limits is None:
            raise error
        self.vela_limits.append(error)

    @property
    def target(self) -> str:
        """The Ethos-U target ("ethos-u55-128"), or "" without a compile spec."""
        return str(getattr(self.compile_spec, "target", "") or "")

    # ------------------------------------------------------------------ values
    def bind(self, node: torch.fx.Node, value: QTensor | ConstTensor) -> None:
        self.values[node] = value

    def bind_parts(self, node: torch.fx.Node, parts: list[QTensor | ConstTensor]) -> None:
        self.parts[node] = parts

    def value(self, arg: Any, user: torch.fx.Node) -> QTensor | ConstTensor:
        if not isinstance(arg, torch.fx.Node) or arg not in self.values:
            raise self.fail(user, f"input {arg!r} has no lowered value (not quantized, or an unsupported producer)")
        return self.values[arg]

    def qtensor(self, arg: Any, user: torch.fx.Node) -> QTensor:
        """``arg`` as a quantized tensor; a constant quantized per tensor becomes a TOSA constant."""
        value = self.value(arg, user)
        if isinstance(value, QTensor):
            return value
        if not value.is_quantized or value.data.dtype not in (np.int8, np.int16) or \
                np.asarray(value.scales).size != 1:
            raise self.fail(user, f"input {arg} is a constant that is not quantized per tensor to int8/int16")
        zero_point = 0 if value.zero_points is None else int(np.asarray(value.zero_points).reshape(-1)[0])
        tensor = QTensor("", value.shape, tosa_dtype_of(torch.from_numpy(value.data).dtype),
                         float(np.asarray(value.scales).reshape(-1)[0]), zero_point)
        data = value.data.transpose(canonical_perm(tensor.rank))
        tensor = tensor.renamed(self.builder.const(data, f"{arg.name}_const"))
        self.values[arg] = tensor  # one TOSA constant however many operators read it
        return tensor

    def const(self, arg: Any, user: torch.fx.Node) -> ConstTensor:
        value = self.value(arg, user)
        if not isinstance(value, ConstTensor):
            raise self.fail(user, f"input {arg} must be a constant (weights/bias)")
        return value

    def shape_of(self, node: torch.fx.Node) -> tuple[int, ...]:
        return tuple(int(d) for d in node.meta["val"].shape)

    def stem(self, node: torch.fx.Node) -> str:
        return self.builder.unique(node.name)

    # ------------------------------------------------------------------ outputs
    def output_quant(self, node: torch.fx.Node) -> OutputQuant:
        """Follows ``node``'s single user through fused activations to its quantize node."""
        found, problem = find_output_quant(node)
        if found is None:
            raise self.fail(node, problem)
        return found

    def output_quant_at(self, quantize: torch.fx.Node) -> OutputQuant:
        """The quantization of quantize node ``quantize`` (for regions lowered as a whole)."""
        scale, zero_point, qmin, qmax, dtype = quantize.args[1:6]
        return OutputQuant(quantize, float(scale), int(zero_point), tosa_dtype_of(dtype), int(qmin), int(qmax))

    def finish(
        self,
        node: torch.fx.Node,
        out: OutputQuant,
        source: str,
        tosa_shape: tuple[int, ...],
        source_dtype: ts.DType,
        scales: Any,
        source_zp: int = 0,
        logical_shape: tuple[int, ...] | None = None,
    ) -> QTensor:
        """RESCALE ``source`` (real value = ``scales * (source - source_zp)``) to the output
        quantization, CLAMP for fused activations/narrow ranges, bind the quantize node.

        ``logical_shape``: the PyTorch shape ``source`` stands for when it is not the node's
        (a 1-D convolution computed as a 2-D one, a reduction before its dims are dropped);
        views then bring it to the quantize node's shape."""
        stem = self.stem(node)
        scales = np.atleast_1d(np.asarray(scales, dtype=np.float64))
        identity = (source_dtype == out.dtype and source_zp == out.zero_point and scales.size == 1
                    and np.float32(scales[0]) == np.float32(out.scale))
        if identity:
            result = source
        else:
            result = emit_rescale(self.builder, source, tosa_shape, source_dtype, out.dtype,
                                  scales / out.scale, source_zp, out.zero_point, stem)
        low, high = out.int_range()
        dtype_min, dtype_max = {ts.DType.INT8: (-128, 127), ts.DType.INT16: (-32768, 32767)}[out.dtype]
        if low > dtype_min or high < dtype_max:
            result = emit_clamp(self.builder, result, tosa_shape, out.dtype, low, high, f"{stem}_clamp")
        value = QTensor(result, logical_shape or self.shape_of(node), out.dtype, out.scale, out.zero_point)
        if value.tosa_shape != tuple(tosa_shape):
            # Same bytes, other shape (e.g. a fully connected layer computed as a 1x1 conv).
            value = value.renamed(self.reshape(result, value.tosa_shape, out.dtype, f"{stem}_reshape"))
        final_shape = tuple(int(d) for d in out.node.meta["val"].shape)
        if final_shape != value.shape:  # views between the operator and its quantize node
            from kiln.backends.arm.tosa.ops.reshape import relayout

            value = relayout(self, value, final_shape, f"{stem}_view")
        self.consumed.update(out.chain)
        self.consumed.add(out.node)
        self.bind(out.node, value)
        return value

    def reshape(self, source: str, tosa_shape: tuple[int, ...], dtype: ts.DType, stem: str) -> str:
        new_shape = self.builder.shape_const(list(tosa_shape), f"{stem}_shape")
        return self.builder.op(ts.Op.RESHAPE, [source, new_shape], tosa_shape, dtype, None, stem)

    def requantize(self, value: QTensor, scale: float, zero_point: int, dtype: ts.DType, stem: str) -> QTensor:
        return requantize(self.builder, value, scale, zero_point, dtype, self.builder.unique(stem))


def scalar_arg(node: torch.fx.Node, index: int, name: str, default: Any) -> Any:
    """Positional-or-keyword argument of an ATen call."""
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def pair(value: Any) -> tuple[int, int]:
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    return (int(values[0]), int(values[-1])) if values else (0, 0)

