"""Which core-ATen operators each Ethos-U family can run, and as which TOSA operators.

Each entry names the TOSA operators an ATen operator becomes; the families that run it
are those whose NPU has all of them (``FamilyConstraints.missing_tosa_operators``: the U85
adds comparisons, SELECT, logical operators, REDUCE_ANY and GATHER to the U55's and U65's
set). An operator missing here is left to the TOSA lowering (e.g. the nodes of a decomposed hardswish that become one TABLE); if it cannot lower it
either, no check knows it and it stays on the CPU with that reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kiln.backends.arm.constraints.families import FAMILY_CONSTRAINTS

_TOSA_NAME = re.compile(r"\b[A-Z][A-Z0-9_]+\b")


@dataclass(frozen=True)
class OperatorSupport:
    """How one core-ATen operator reaches the NPU."""

    tosa: str  # the TOSA operator(s) it becomes
    kind: str = "compute"  # "compute", "elementwise" or "data" (data movement only)

    @property
    def families(self) -> frozenset[str]:
        """The Ethos-U families whose NPU has every TOSA operator this one becomes."""
        needed = set(_TOSA_NAME.findall(self.tosa))
        return frozenset(family for family, constraints in FAMILY_CONSTRAINTS.items()
                         if not needed & constraints.missing_tosa_operators)


# fmt: off
OPERATORS: dict[str, OperatorSupport] = {
    # MAC operations.
    "aten::convolution": OperatorSupport("CONV2D / DEPTHWISE_CONV2D / TRANSPOSE_CONV2D"),
    "aten::addmm": OperatorSupport("CONV2D (fully connected)"),
    "aten::mm": OperatorSupport("MATMUL or CONV2D"),
    "aten::bmm": OperatorSupport("MATMUL"),
    "aten::max_pool2d_with_indices": OperatorSupport("MAX_POOL2D"),
    "aten::avg_pool2d": OperatorSupport("AVG_POOL2D"),
    "aten::_adaptive_avg_pool2d": OperatorSupport("AVG_POOL2D"),
    "aten::mean.dim": OperatorSupport("AVG_POOL2D / REDUCE_SUM + RESCALE"),
    "aten::sum.dim_IntList": OperatorSupport("REDUCE_SUM"),
    "aten::amax": OperatorSupport("REDUCE_MAX"),
    "aten::amin": OperatorSupport("REDUCE_MIN"),
    "aten::_softmax": OperatorSupport("REDUCE_MAX, TABLE, REDUCE_SUM, CLZ, MUL, shifts (integer softmax)"),
    "aten::_log_softmax": OperatorSupport("REDUCE_MAX, TABLE, REDUCE_SUM, CLZ, MUL, SUB (integer log_softmax)"),
    # Element-wise arithmetic and activations.
    "aten::add.Tensor": OperatorSupport("ADD", kind="elementwise"),
    "aten::sub.Tensor": OperatorSupport("SUB", kind="elementwise"),
    "aten::mul.Tensor": OperatorSupport("MUL", kind="elementwise"),
    "aten::maximum": OperatorSupport("MAXIMUM", kind="elementwise"),
    "aten::minimum": OperatorSupport("MINIMUM", kind="elementwise"),
    "aten::abs": OperatorSupport("ABS", kind="elementwise"),
    "aten::neg": OperatorSupport("NEGATE", kind="elementwise"),
    "aten::relu": OperatorSupport("CLAMP", kind="elementwise"),
    "aten::hardtanh": OperatorSupport("CLAMP", kind="elementwise"),
    "aten::clamp": OperatorSupport("CLAMP", kind="elementwise"),
    "aten::sigmoid": OperatorSupport("TABLE", kind="elementwise"),
    "aten::tanh": OperatorSupport("TABLE", kind="elementwise"),
    "aten::hardswish": OperatorSupport("TABLE", kind="elementwise"),
    "aten::hardsigmoid": OperatorSupport("TABLE", kind="elementwise"),
    "aten::gelu": OperatorSupport("TABLE", kind="elementwise"),
    "aten::leaky_relu": OperatorSupport("TABLE", kind="elementwise"),
    "aten::elu": OperatorSupport("TABLE", kind="elementwise"),
    "aten::exp": OperatorSupport("TABLE", kind="elementwise"),
    "aten::log": OperatorSupport("TABLE", kind="elementwise"),
    "aten::rsqrt": OperatorSupport("TABLE", kind="elementwise"),
    "aten::native_layer_norm": OperatorSupport("REDUCE_SUM, MUL, CLZ, shifts (integer layer norm)"),
    # Data movement.
    "aten::view": OperatorSupport("RESHAPE", kind="data"),
    # A reshape only when it restrides a row-major tensor (kiln.passes.as_strided); any other
    # read stays on the CPU's as_strided_copy kernel with the lowering's reason.
    "aten::as_strided": OperatorSupport("RESHAPE", kind="data"),
    "aten::permute": OperatorSupport("TRANSPOSE", kind="data"),
    "aten::unsqueeze": OperatorSupport("RESHAPE", kind="data"),
    "aten::squeeze.dims": OperatorSupport("RESHAPE", kind="data"),
    "aten::squeeze.dim": OperatorSupport("RESHAPE", kind="data"),
    "aten::clone": OperatorSupport("IDENTITY", kind="data"),
    "aten::alias": OperatorSupport("IDENTITY", kind="data"),
    "aten::cat": OperatorSupport("CONCAT", kind="data"),
    "aten::slice.Tensor": OperatorSupport("SLICE", kind="data"),
    "aten::select.int": OperatorSupport("SLICE + RESHAPE", kind="data"),
    "aten::split_with_sizes": OperatorSupport("SLICE", kind="data"),
    "aten::expand": OperatorSupport("TILE", kind="data"),
    "aten::repeat": OperatorSupport("TILE", kind="data"),
    "aten::constant_pad_nd": OperatorSupport("PAD", kind="data"),
    "aten::upsample_nearest2d.vec": OperatorSupport("RESIZE (nearest)"),
    # Quantized F.interpolate traces to index reads with computed indices (resize.py).
    "aten::index.Tensor": OperatorSupport("RESIZE (an upsampling's quantized form)"),
    # Bilinear RESIZE is U85's; U55/U65 run 2x as nearest 2x and a 3x3 filter (resize.py).
    "aten::upsample_bilinear2d.vec": OperatorSupport("RESIZE (bilinear) / RESIZE + DEPTHWISE_CONV2D"),
    # Ethos-U85 only (U55/U65 lack their TOSA operators).
    "aten::eq.Tensor": OperatorSupport("EQUAL", kind="elementwise"),
    "aten::eq.Scalar": OperatorSupport("EQUAL", kind="elementwise"),
    "aten::ne.Tensor": OperatorSupport("EQUAL + LOGICAL_NOT", kind="elementwise"),
    "aten::ne.Scalar": OperatorSupport("EQUAL + LOGICAL_NOT", kind="elementwise"),
    "aten::lt.Tensor": OperatorSupport("GREATER", kind="elementwise"),
    "aten::lt.Scalar": OperatorSupport("GREATER", kind="elementwise"),
    "aten::le.Tensor": OperatorSupport("GREATER_EQUAL", kind="elementwise"),
    "aten::le.Scalar": OperatorSupport("GREATER_EQUAL", kind="elementwise"),
    "aten::gt.Tensor": OperatorSupport("GREATER", kind="elementwise"),
    "aten::gt.Scalar": OperatorSupport("GREATER", kind="elementwise"),
    "aten::ge.Tensor": OperatorSupport("GREATER_EQUAL", kind="elementwise"),
    "aten::ge.Scalar": OperatorSupport("GREATER_EQUAL", kind="elementwise"),
    "aten::where.self": OperatorSupport("SELECT", kind="elementwise"),
    "aten::logical_not": OperatorSupport("LOGICAL_NOT", kind="elementwise"),
    "aten::logical_and": OperatorSupport("LOGICAL_AND", kind="elementwise"),
    "aten::logical_or": OperatorSupport("LOGICAL_OR", kind="elementwise"),
    "aten::any.dim": OperatorSupport("REDUCE_ANY"),
    # A tensor of one value in its input's shape: a constant, on every Ethos-U.
    "aten::full_like": OperatorSupport("CONST", kind="data"),
    "aten::index_select": OperatorSupport("GATHER", kind="data"),
    "aten::embedding": OperatorSupport("GATHER", kind="data"),
    "aten::gather": OperatorSupport("GATHER", kind="data"),
}
# fmt: on


def support_for(operator: str) -> OperatorSupport | None:
    return OPERATORS.get(operator)
