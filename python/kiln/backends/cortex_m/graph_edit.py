"""Reading and editing a quantized (PT2E reference form) graph: quantization parameters of
quantize/dequantize nodes, constant tensors, and new nodes and constants.

The graph is an ExportedProgram's (or a rewritten copy of it, with delegate calls); new
constants become placeholders with ``CONSTANT_TENSOR`` input specs and their tensors go
into the program's ``constants``, which is where :func:`kiln.passes.to_out_variants`
reads them.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Optional

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, InputSpec, TensorArgument
from torch.fx import GraphModule, Node

QUANTIZE = torch.ops.quantized_decomposed.quantize_per_tensor.default
DEQUANTIZE = torch.ops.quantized_decomposed.dequantize_per_tensor.default
DEQUANTIZE_PER_CHANNEL = torch.ops.quantized_decomposed.dequantize_per_channel.default


@dataclass(frozen=True)
class LoweringOptions:
    """Choices the Cortex-M lowering leaves to its caller."""

    #: Fully connected layers get a kernel sum (bias + input offset x the sum of each
    #: output's weights, folded at compile time) instead of a bias: the kernel then skips
    #: summing the weights at run time (ExecuTorch does this for Helium targets).
    linear_kernel_sums: bool = True


@dataclass(frozen=True)
class QParams:
    """Per-tensor int8 quantization: real = (q - zero_point) * scale, q in [qmin, qmax]."""

    scale: float
    zero_point: int
    qmin: int
    qmax: int

    def quantize(self, real: float) -> int:
        """``real`` as the integer quantize_per_tensor gives it (round half to even)."""
        return int(max(self.qmin, min(self.qmax, round(real / self.scale) + self.zero_point)))


def _int8_qparams(node: Node, target: Any) -> Optional[QParams]:
    if node.op != "call_function" or node.target is not target:
        return None
    _, scale, zero_point, qmin, qmax, dtype = node.args[:6]
    if dtype is not torch.int8 or not isinstance(scale, float) or not isinstance(zero_point, int):
        return None
    return QParams(float(scale), int(zero_point), int(qmin), int(qmax))


def dequantized(arg: Any) -> Optional[tuple[Node, QParams]]:
    """``(int8 source, qparams)`` if ``arg`` is a per-tensor int8 dequantize, else None."""
    if not isinstance(arg, Node):
        return None
    qparams = _int8_qparams(arg, DEQUANTIZE)
    return None if qparams is None else (arg.args[0], qparams)


def quantize_qparams(node: Node) -> Optional[QParams]:
    """The qparams of a per-tensor int8 quantize node, else None."""
    return _int8_qparams(node, QUANTIZE)


def only_user(node: Node) -> Optional[Node]:
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def meta_tensor(shape: Any, dtype: torch.dtype) -> torch.Tensor:
    return torch.empty(tuple(int(s) for s in shape), dtype=dtype, device="meta")


def shape_of(node: Node) -> tuple[int, ...]:
    return tuple(int(s) for s in node.meta["val"].shape)


class GraphEditor:
    """Adds constants and calls to ``graph_module``, whose signature is ``program``'s."""

    def __init__(self, program: ExportedProgram, graph_module: GraphModule,
                 options: LoweringOptions = LoweringOptions()) -> None:
        self.program = program
        self.options = options
        self.graph_module = graph_module
        self.graph = graph_module.graph
        self._count = 0
        self._scratch: Optional[Node] = None
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        user_inputs = {s.arg.name for s in program.graph_signature.input_specs if s.kind is InputKind.USER_INPUT}
        self._anchor = next((n for n in placeholders if n.name in user_inputs), None)
        self._last_placeholder = placeholders[-1] if placeholders else None

    def constant_value(self, node: Any) -> Optional[torch.Tensor]:
        """The tensor of a parameter, buffer or constant placeholder, else None."""
        if not isinstance(node, Node) or node.op != "placeholder":
            return None
        spec = next((s for s in self.program.graph_signature.input_specs if s.arg.name == node.name), None)
        if spec is None or spec.kind is InputKind.USER_INPUT:
            return None
        for table in (self.program.state_dict, self.program.constants):
            if spec.target in table:
                return table[spec.target]
        return None

    def constant(self, hint: str, tensor: torch.Tensor) -> Node:
        """A new constant placeholder holding ``tensor`` (contiguous)."""
        self._count += 1
        name = f"_cortex_m_{hint}_{self._count}"
        if self._anchor is not None:
            context = self.graph.inserting_before(self._anchor)
        elif self._last_placeholder is not None:
            context = self.graph.inserting_after(self._last_placeholder)
        else:
            context = self.graph.inserting_before(next(iter(self.graph.nodes)))
        with context:
            node = self.graph.placeholder(name)
        node.meta["val"] = meta_tensor(tensor.shape, tensor.dtype)
        self.program.constants[node.name] = tensor.contiguous()
        specs = self.program.graph_signature.input_specs
        index = next((i for i, s in enumerate(specs) if s.kind is InputKind.USER_INPUT), len(specs))
        specs.insert(index, InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(node.name), node.name))
        if self._anchor is None:
            self._last_placeholder = node
        return node

    def call(self, target: Any, args: tuple[Any, ...], val: torch.Tensor, *, before: Node,
             like: Optional[Node] = None) -> Node:
        """A call of ``target`` inserted before ``before``, its output described by ``val``;
        ``like``'s metadata (module stack, source) is carried over."""
        with self.graph.inserting_before(before):
            node = self.graph.call_function(target, args)
        if like is not None:
            node.meta.update({k: v for k, v in like.meta.items() if k != "val"})
        node.meta["val"] = val
        return node

    def scratch(self, size: int) -> Node:
        """An uninitialised planned uint8 buffer of at least ``size`` bytes, the kernels'
        scratch memory: one per graph, as large as the largest need, made before every
        call (kernels run one at a time, so they can all share it)."""
        size = max(int(size), 1)
        if self._scratch is None:
            first_call = next(n for n in self.graph.nodes if n.op not in ("placeholder",))
            with self.graph.inserting_before(first_call):
                self._scratch = self.graph.call_function(torch.ops.aten.empty.memory_format, ([size],),
                                                         {"dtype": torch.uint8})
        elif self._scratch.args[0][0] >= size:
            return self._scratch
        self._scratch.args = ([size],)
        self._scratch.meta["val"] = meta_tensor((size,), torch.uint8)
        return self._scratch

    def finish(self) -> None:
        self.graph.eliminate_dead_code()
        self.graph.lint()
        self.graph_module.recompile()


def is_getitem(node: Node, index: int) -> bool:
    return node.op == "call_function" and node.target is operator.getitem and node.args[1] == index
