"""Runs in the ExecuTorch venv (never imports kiln): what ExecuTorch's own reader and runtime
see of a .pte's ``forward``, as one JSON line, for comparing two programs' conventions.

Usage: python executorch_read_conventions.py PROGRAM.pte

Prints {"methods", "load_error", "inputs", "outputs", "plan", "compile_specs"}:

* ``methods``, ``inputs``/``outputs`` ([dtype, sizes] per tensor): ExecuTorch's runtime
  (``executorch.runtime``) loading the program and reading the method's metadata;
  ``load_error``: what loading the method says (this venv's runtime has no EthosUBackend);
* ``plan``: every instruction as ExecuTorch's deserializer reads it: a kernel call as
  ["op.overload", argument, ...], a delegate call as ["delegate:ID", argument, ...]; a tensor
  argument as ["tensor", scalar type, sizes], an int as its value, a double as "double"
  (scales are the programs' own), anything else as its type name;
* ``compile_specs``: {key: value} of each delegate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _argument(plan: Any, index: int) -> Any:
    from executorch.exir.schema import Double, Int, Null, Tensor

    value = plan.values[index].val
    if isinstance(value, Tensor):
        return ["tensor", int(value.scalar_type), list(value.sizes)]
    if isinstance(value, Int):
        return value.int_val
    if isinstance(value, Double):
        return "double"
    if isinstance(value, Null):
        return None
    return type(value).__name__


def _plan(path: Path) -> tuple[list[list[Any]], list[dict[str, str]]]:
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import DelegateCall, KernelCall

    loaded = deserialize_pte_binary(path.read_bytes())
    plan = getattr(loaded, "program", loaded).execution_plan[0]
    steps = []
    for chain in plan.chains:
        for instruction in chain.instructions:
            call = instruction.instr_args
            if isinstance(call, KernelCall):
                operator = plan.operators[call.op_index]
                head = f"{operator.name}.{operator.overload}"
            elif isinstance(call, DelegateCall):
                head = f"delegate:{plan.delegates[call.delegate_index].id}"
            else:
                steps.append([type(call).__name__])
                continue
            steps.append([head, *(_argument(plan, i) for i in call.args)])
    specs = [{s.key: bytes(s.value).decode(errors="replace") for s in d.compile_specs} for d in plan.delegates]
    return steps, specs


def main() -> int:
    from executorch.runtime import Runtime

    path = Path(sys.argv[1])
    program = Runtime.get().load_program(path)
    meta = program.metadata("forward")
    load_error = ""
    try:
        program.load_method("forward")
    except RuntimeError as error:
        load_error = str(error)
    steps, specs = _plan(path)

    def tensors(count: int, info: Any) -> list[list[Any]]:
        return [[int(info(i).dtype()), list(info(i).sizes())] for i in range(count)]

    print(json.dumps({
        "methods": sorted(program.method_names), "load_error": load_error,
        "inputs": tensors(meta.num_inputs(), meta.input_tensor_meta),
        "outputs": tensors(meta.num_outputs(), meta.output_tensor_meta),
        "plan": steps, "compile_specs": specs,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
