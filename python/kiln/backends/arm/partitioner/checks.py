"""Support checks: small predicates that say why a node cannot run on the NPU.

Each check is called with an operator node and a :class:`CheckContext` and
returns ``None`` when it has no objection, or a one-line reason. A check only
looks at the operators it knows (``applies_to``) and asks the constraint table
(:mod:`kiln.backends.arm.constraints`) about them: the TOSA lowering asks the same
functions, so both refuse a node with the same reason.

The quantization of a node's inputs and outputs is not checked here: that is a
property of the quantized group around the node (see ``grouping.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol

import torch

from kiln.backends.arm.constraints import (
    convolution_objection,
    family_constraints,
    matmul_objection,
    operator_objection,
    pooling_objection,
    reduction_objection,
    softmax_objection,
    support_for,
    upsampling_objection,
    weight_sum_objection,
)
from kiln.backends.arm.partitioner.batch import folds_batch
from kiln.delegation.nodes import argument, quantized_dtype, shape_of
from kiln.passes.constant_values import ConstantEvaluator
from kiln.passes.delegation import operator_name
from kiln.passes.safe_softmax import applies_a_mask, masked_scores, softmax_mask


@dataclass(frozen=True)
class CheckContext:
    """What checks may look at besides the node."""

    target: str  # "ethos-u55-128"
    constants: Mapping[str, torch.Tensor]  # placeholder name -> tensor (weights, ...)
    compile_spec: Any = None  # kiln.backends.arm.EthosUCompileSpec
    # Nodes computed from constants only (dequantized weights, their transposes).
    constant_nodes: frozenset[torch.fx.Node] = frozenset()


class SupportCheck(Protocol):
    name: str

    def __call__(self, node: torch.fx.Node, context: CheckContext) -> Optional[str]: ...


# ----------------------------------------------------------------------------- helpers
def pair(value: Any, default: int) -> tuple[int, int]:
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return default, default
    if isinstance(value, int):
        return value, value
    values = [int(v) for v in value]
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])


def tensor_shapes(node: torch.fx.Node, context: "CheckContext") -> list[tuple[str, tuple[int, ...], bool]]:
    """(name, shape, is constant) of the node's tensor inputs and of its output(s)."""
    shapes = [
        (n.name, s, constant_behind(n, context) is not None)
        for n in node.all_input_nodes
        if (s := shape_of(n)) is not None
    ]
    value = node.meta.get("val")
    values = value if isinstance(value, (list, tuple)) else [value]
    shapes += [
        (f"{node.name} (output)", tuple(int(d) for d in v.shape), False)
        for v in values
        if isinstance(v, torch.Tensor)
    ]
    return shapes


def constant_behind(node: Any, context: CheckContext) -> Optional[torch.Tensor]:
    """The constant tensor a (dequantized, possibly permuted) weight argument comes
    from, or None if the argument depends on the inputs."""
    while isinstance(node, torch.fx.Node):
        if node.op == "placeholder":
            return context.constants.get(node.name)
        if node not in context.constant_nodes or not node.all_input_nodes:
            return None
        node = node.all_input_nodes[0]
    return None


@dataclass(frozen=True)
class _Check:
    """A check for some operators: ``rule`` returns a reason or None."""

    name: str
    applies_to: frozenset[str]
    rule: Callable[[torch.fx.Node, CheckContext], Optional[str]]

    def __call__(self, node: torch.fx.Node, context: CheckContext) -> Optional[str]:
        if operator_name(node) not in self.applies_to:
            return None
        return self.rule(node, context)


# ----------------------------------------------------------------------------- checks
class OperatorSetCheck:
    """An operator whose TOSA operators the family's NPU lacks (constraints.OPERATORS)."""

    name = "operator set"

    def __call__(self, node: torch.fx.Node, context: CheckContext) -> Optional[str]:
        return operator_objection(operator_name(node), context.target)


class TensorShapeCheck:
    """Every dimension in [1, 65535]; rank <= 4 (<= 6 for element-wise ops); batch 1
    for the 4-D feature maps of MAC, pooling and table operators, unless the lowering folds
    the batch into another dimension (:mod:`kiln.backends.arm.partitioner.batch`)."""

    name = "tensor shape"

    def __call__(self, node: torch.fx.Node, context: CheckContext) -> Optional[str]:
        support = support_for(operator_name(node))
        kind = support.kind if support else "compute"
        limits = family_constraints(context.target)
        for name, shape, constant in tensor_shapes(node, context):
            if any(d > limits.max_dimension for d in shape):
                return (f"tensor '{name}' has shape {list(shape)}: dimensions above {limits.max_dimension} "
                        "are not supported")
            if kind == "data" or constant:
                continue
            limit = limits.max_rank_elementwise if kind == "elementwise" else limits.max_rank
            if len(shape) > limit:
                return f"tensor '{name}' has rank {len(shape)}; {operator_name(node)} supports rank <= {limit}"
            if kind == "compute" and len(shape) == 4 and shape[0] != 1 and not folds_batch(node):
                return (f"tensor '{name}' has batch {shape[0]}; the NPU needs batch 1 for {operator_name(node)}, "
                        "and its lowering cannot fold the batch into another dimension")
        return None


def _convolution_rule(node: torch.fx.Node, context: CheckContext) -> Optional[str]:
    input_shape = shape_of(node.args[0])
    weight_shape = shape_of(node.args[1])
    if input_shape is None or weight_shape is None or len(input_shape) not in (3, 4):
        return None  # the lowering decides about 3-D convolutions
    one_d = len(input_shape) == 3  # runs as a 2-D convolution along W with H = 1
    stride = pair(argument(node, 3, "stride"), 1)
    padding = pair(argument(node, 4, "padding"), 0)
    dilation = pair(argument(node, 5, "dilation"), 1)
    if one_d:
        stride, padding, dilation = (1, stride[0]), (0, padding[0]), (1, dilation[0])
    transposed = bool(argument(node, 6, "transposed", False))
    groups = int(argument(node, 8, "groups", 1))
    depthwise = groups > 1 and groups == input_shape[1] and not transposed
    reason = convolution_objection(context.target, stride, padding, dilation, depthwise=depthwise,
                                   transposed=transposed, one_d=one_d)
    if reason is not None:
        return reason
    weights = constant_behind(node.args[1], context)
    if weights is not None and weights.dtype == torch.int8 and weights.dim() >= 2:
        # Output channels are axis 0 ([OC, IC, ...]), axis 1 for transposed ([IC, OC, ...]).
        per_channel = weights.transpose(0, 1) if transposed else weights
        sums = per_channel.to(torch.int64).abs().reshape(per_channel.shape[0], -1).sum(dim=1)
        return weight_sum_objection(context.target, int(sums.max()))
    return None


def _pooling_rule(node: torch.fx.Node, context: CheckContext) -> Optional[str]:
    op = operator_name(node)
    kernel = pair(argument(node, 1, "kernel_size"), 1)
    stride = pair(argument(node, 2, "stride"), 0)
    stride = kernel if stride == (0, 0) else stride  # torch: empty stride means kernel size
    padding = pair(argument(node, 3, "padding"), 0)
    if op == "aten::max_pool2d_with_indices":
        dilation = pair(argument(node, 4, "dilation"), 1)
        if dilation != (1, 1):
            return f"max pooling with dilation {list(dilation)}: TOSA MAX_POOL2D has no dilation"
    kind = "avg" if op == "aten::avg_pool2d" else "max"
    return pooling_objection(context.target, kind, kernel, stride, padding)


def _reduction_rule(node: torch.fx.Node, context: CheckContext) -> Optional[str]:
    shape = shape_of(node.args[0])
    if shape is None:
        return None
    dims = argument(node, 1, "dim")
    dims = list(range(len(shape))) if dims is None else ([dims] if isinstance(dims, int) else list(dims))
    axes = sorted({d % len(shape) for d in dims})
    reduced = [shape[d] for d in axes]
    dtype = quantized_dtype(node.args[0]) or torch.int8
    # A mean over H and W of a 4-D tensor runs as one average pooling window.
    global_pool = operator_name(node) == "aten::mean.dim" and len(shape) == 4 and axes == [2, 3]
    return reduction_objection(context.target, reduced, dtype.itemsize * 8, global_pool=global_pool)


def _softmax_rule(node: torch.fx.Node, context: CheckContext) -> Optional[str]:
    shape = shape_of(node.args[0])
    if shape is None or not shape:
        return None
    dim = int(argument(node, 1, "dim", -1)) % len(shape)
    reason = softmax_objection(context.target, math.prod(shape) // shape[dim])
    if reason is not None:
        return reason
    if applies_a_mask(node.args[0]):
        return _mask_objection(node, dim, context)
    return None


def _mask_objection(node: torch.fx.Node, dim: int, context: CheckContext) -> Optional[str]:
    """A mask added to a softmax's scores is applied inside the softmax when it only hides
    scores (0 or -inf) and hides no whole row (PyTorch's NaN there has no integer code)."""
    values = ConstantEvaluator(lambda n: context.constants.get(n.name) if n.op == "placeholder" else None)
    if masked_scores(node.args[0], values.value) is not None:
        return None  # a bool mask computed from the inputs (its where and comparisons are U85's)
    mask = softmax_mask(node.args[0], values.value)
    if mask is None:
        return f"'{node.args[0].name}' adds a computed tensor to the scores: only a constant mask is applied"
    if not mask.only_hides:
        return f"the mask '{mask.mask.name}' holds values other than 0 and -inf: only a mask that hides scores is applied"
    if mask.hides_a_row(dim):
        return f"the mask '{mask.mask.name}' hides whole rows, whose softmax is NaN"
    return None


def _resize_rule(node: torch.fx.Node, context: CheckContext) -> Optional[str]:
    before, after = shape_of(node.args[0]), shape_of(node)
    if before is None or after is None or len(before) != 4:
        return None  # the lowering names what it does not lower
    bilinear = operator_name(node) == "aten::upsample_bilinear2d.vec"
    align_corners = bool(argument(node, 2, "align_corners", False)) if bilinear else False
    return upsampling_objection(context.target, "bilinear" if bilinear else "nearest", before[2:], after[2:],
                                align_corners)


def _matmul_rule(node: torch.fx.Node, context: CheckContext) -> Optional[str]:
    inputs = [a for a in node.args[:2] if isinstance(a, torch.fx.Node)]
    dynamic = [a for a in inputs if constant_behind(a, context) is None]
    if len(dynamic) < 2:
        return None  # a constant operand makes it a fully connected layer
    shape = shape_of(inputs[0])
    dtypes = [str(dtype).removeprefix("torch.") for operand in dynamic if (dtype := quantized_dtype(operand))]
    return matmul_objection(context.target, shape[-1] if shape else 0, dtypes)


ConvolutionCheck = _Check("convolution limits", frozenset({"aten::convolution"}), _convolution_rule)
PoolingCheck = _Check(
    "pooling limits", frozenset({"aten::max_pool2d_with_indices", "aten::avg_pool2d"}), _pooling_rule
)
ReductionCheck = _Check(
    "reduction limits", frozenset({"aten::mean.dim", "aten::sum.dim_IntList", "aten::amax", "aten::amin"}),
    _reduction_rule,
)
SoftmaxCheck = _Check("softmax limits", frozenset({"aten::_softmax", "aten::_log_softmax"}), _softmax_rule)
# The quantized form of an upsampling (index reads) is the lowering's to recognise: its check
# (tosa/ops/resize.py) asks the same question.
ResizeCheck = _Check("resize limits", frozenset({"aten::upsample_nearest2d.vec", "aten::upsample_bilinear2d.vec"}),
                     _resize_rule)
MatmulCheck = _Check("matrix product limits", frozenset({"aten::mm", "aten::bmm"}), _matmul_rule)


class LowerableCheck:
    """The TOSA lowering must be able to lower the operator (asks
    kiln.backends.arm.tosa's ``is_lowerable``, which judges the operator alone). An
    operator neither the lowering nor the constraint table knows is one no check knows: it stays
    on the CPU with that reason. How the operator is quantized is judged per quantized
    group (:func:`group_objection`)."""

    name = "TOSA lowering"

    def __init__(self) -> None:
        self._is_lowerable, _ = _find_tosa_support()

    def __call__(self, node: torch.fx.Node, context: CheckContext) -> Optional[str]:
        op = operator_name(node)
        if self._is_lowerable is None:
            return None if support_for(op) else f"no Ethos-U support check knows {op}; it runs on the CPU"
        ok, reason = self._is_lowerable(node, context.compile_spec, context.constant_nodes)
        if ok:
            return None
        if support_for(op) is None:
            return f"no Ethos-U support check knows {op}; it runs on the CPU ({reason})"
        return reason or f"the TOSA lowering cannot lower {op}"


def group_objection(nodes: list[torch.fx.Node], context: CheckContext) -> Optional[str]:
    """Why the TOSA lowering cannot take this quantized group as a whole (a float value
    inside it that is not quantized before its next use), or None."""
    _, group_problem = _find_tosa_support()
    if group_problem is None:
        return None
    return group_problem(nodes, context.compile_spec)


def _find_tosa_support() -> tuple[Optional[Callable[..., tuple[bool, str]]], Optional[Callable[..., Optional[str]]]]:
    try:
        from kiln.backends.arm.tosa.support import group_problem, is_lowerable
    except ImportError:
        return None, None
    return is_lowerable, group_problem


def checks_for(target: str) -> list[SupportCheck]:
    """The checks for one target, in the order they run (first objection wins)."""
    del target  # every check reads the family from the context; the list is the same
    return [
        OperatorSetCheck(),
        TensorShapeCheck(),
        ConvolutionCheck,
        PoolingCheck,
        ReductionCheck,
        SoftmaxCheck,
        ResizeCheck,
        MatmulCheck,
        LowerableCheck(),
    ]


def first_objection(
    node: torch.fx.Node, checks: list[SupportCheck], context: CheckContext
) -> Optional[str]:
    """The reason of the first check that objects to ``node``, or None."""
    for check in checks:
        reason = check(node, context)
        if reason is not None:
            return reason
    return None
