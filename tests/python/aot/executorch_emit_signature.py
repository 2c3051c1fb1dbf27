"""Compile a saved torch.export program with ExecuTorch and describe its kernel calls.

Executed by the ExecuTorch venv's python as a subprocess. Usage:

    python executorch_emit_signature.py EXPORTED.pt2 OUT.json

OUT.json: {"calls": [[operator, [argument description, ...]], ...],
"planned_buffer_sizes": [...]}. A description is "Tensor[2, 3]", "Int=1",
"Bool=False", "Double=1e-05", "IntList=[1, 1]", "Null" or "TensorList(3)"; the
AOT tests describe Kiln's programs the same way and compare.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import torch


def describe(values: list[Any], index: int) -> str:
    value = values[index].val
    kind = type(value).__name__
    if kind == "Tensor":
        return f"Tensor{list(value.sizes)}"
    if kind in ("Int", "Bool", "Double"):
        return f"{kind}={getattr(value, kind.lower() + '_val')}"
    if kind == "IntList":
        return f"IntList={[values[i].val.int_val for i in value.items]}"
    if kind == "TensorList":
        return f"TensorList({len(value.items)})"
    return kind


def main() -> int:
    from executorch.exir import to_edge
    from executorch.exir._serialize._program import deserialize_pte_binary

    exported = torch.export.load(sys.argv[1])
    buffer = to_edge(exported).to_executorch().buffer
    plan = deserialize_pte_binary(buffer).program.execution_plan[0]
    calls = []
    for instruction in plan.chains[0].instructions:
        call = instruction.instr_args
        operator = plan.operators[call.op_index]
        name = f"{operator.name}.{operator.overload}"
        calls.append([name, [describe(plan.values, a) for a in call.args]])
    result = {"calls": calls, "planned_buffer_sizes": list(plan.non_const_buffer_sizes)}
    with open(sys.argv[2], "w") as out:
        json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
