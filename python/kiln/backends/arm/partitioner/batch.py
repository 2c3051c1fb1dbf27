"""Operators whose lowering folds a batch above 1 into another dimension.

The NPU's MAC, pooling and table operations work on one feature map at a time (batch 1);
for a 4-D tensor with a larger batch, :class:`~kiln.backends.arm.partitioner.checks.TensorShapeCheck`
objects, unless the operator computes the same with the batch folded away, as Vela's own
front ends do with reshapes:

* softmax, log_softmax and any along a dimension: every row is independent, so the lowering lays the rows out as
  one ``(1, rows, length)`` matrix (tosa/ops/softmax.py);
* pointwise functions (a scale, a TABLE): the batch is one more elementwise dimension;
* convolutions whose kernel is one row high with stride 1 and no padding along the height
  (1-D convolutions, pointwise 1x1 ones): each output row reads one input row, so the batch
  folds into the height (tosa/ops/conv.py).
"""

from __future__ import annotations

import torch

from kiln.passes.delegation import operator_name

_ROW_WISE = frozenset({"aten::_softmax", "aten::_log_softmax", "aten::any.dim"})


def folds_batch(node: torch.fx.Node) -> bool:
    """True if the TOSA lowering of operator ``node`` never hands the NPU a batch above 1."""
    from kiln.backends.arm.tosa.ops.activation import is_pointwise  # the lowering's own answers
    from kiln.backends.arm.tosa.ops.conv import folds_batch_into_height

    name = operator_name(node)
    if name in _ROW_WISE or is_pointwise(node):
        return True
    return name == "aten::convolution" and folds_batch_into_height(node)
