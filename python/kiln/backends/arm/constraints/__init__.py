"""Each Ethos-U family's operator constraints: one table, consulted by both the
partitioner's checks and the TOSA lowering's, so the partition report never puts on the
NPU what the lowering refuses.

* :mod:`.families`: the limits per family as data (:data:`FAMILY_CONSTRAINTS`: strides,
  kernels, resize factors and modes, tensor sizes, which TOSA operators the NPU lacks),
  each with the Vela rule it comes from;
* :mod:`.operators`: which core-ATen operators reach the NPU, as which TOSA operators,
  on which families;
* :mod:`.rules`: the questions both sides ask ("why can't this family run this
  convolution?"), answered with the reason the report shows, or None.
"""

from kiln.backends.arm.constraints.families import FAMILY_CONSTRAINTS, FamilyConstraints, family_constraints
from kiln.backends.arm.constraints.operators import OPERATORS, OperatorSupport, support_for
from kiln.backends.arm.constraints.rules import (
    bilinear_as_filter,
    convolution_objection,
    matmul_objection,
    operator_objection,
    pooling_objection,
    reduction_objection,
    softmax_objection,
    upsampling_objection,
    weight_sum_objection,
)

__all__ = [
    "FAMILY_CONSTRAINTS", "FamilyConstraints", "family_constraints", "OPERATORS", "OperatorSupport", "support_for",
    "bilinear_as_filter", "convolution_objection", "matmul_objection", "operator_objection", "pooling_objection",
    "reduction_objection", "softmax_objection", "upsampling_objection", "weight_sum_objection",
]
