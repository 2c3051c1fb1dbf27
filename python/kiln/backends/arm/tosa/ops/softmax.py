"""softmax: not lowered to the NPU (it stays on the CPU, between its q/dq nodes).

An integer softmax needs exp of differences, a sum and a reciprocal in fixed point
(TABLE + REDUCE_SUM + a Newton reciprocal); Kiln does not emit it yet, on any target.
The check says so, so the partitioner keeps softmax on the CPU with this reason.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import torch

from kiln.backends.arm.tosa.context import LoweringContext
from kiln.backends.arm.tosa.ops import register

aten = torch.ops.aten

REASON = ("integer softmax is not lowered to TOSA by Kiln yet (it needs an exp/sum/reciprocal "
          "fixed-point decomposition); it runs on the CPU")


def check_softmax(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    return REASON


@register(aten._softmax.default, aten.softmax.int, aten._log_softmax.default, check=check_softmax)
def lower_softmax(ctx: LoweringContext, node: torch.fx.Node) -> None:
    raise ctx.fail(node, REASON)
