"""Checks a Kiln .pte against ExecuTorch 1.5.1, in its venv: ``python executorch_program_check.py PTE``.

Prints JSON: the program's operators as ExecuTorch's deserializer reads them; for each
``cortex_m::`` call whose argument count differs from the schema ExecuTorch's Cortex-M
library declares, a line saying so (``mismatches``); whether ExecuTorch's runtime
(its Python bindings) registers the ``cortex_m::`` kernels; and, only if it does, the
program's output for an all-zero input.
"""

from __future__ import annotations

import json
import sys

import executorch.backends.cortex_m.passes  # noqa: F401 - before the operators: an import cycle
import executorch.backends.cortex_m.ops.operators  # noqa: F401 - declares the cortex_m:: schemas
import torch
from executorch.exir._serialize._program import deserialize_pte_binary
from executorch.exir.schema import KernelCall
from executorch.extension.pybindings import portable_lib


def main() -> None:
    data = open(sys.argv[1], "rb").read()
    program = deserialize_pte_binary(data).program
    plan = program.execution_plan[0]
    operators = [f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators]
    mismatches = []
    for chain in plan.chains:
        for instruction in chain.instructions:
            call = instruction.instr_args
            if not isinstance(call, KernelCall):
                continue
            name = operators[call.op_index]
            if not name.startswith("cortex_m::"):
                continue
            packet, _, overload = name.split("::")[1].partition(".")
            schema = getattr(getattr(torch.ops.cortex_m, packet), overload)._schema
            if len(schema.arguments) + len(schema.returns) != len(call.args):
                mismatches.append(f"{name}: {len(call.args)} arguments, schema has "
                                  f"{len(schema.arguments)} + {len(schema.returns)} return")
    registered = [n for n in portable_lib._get_operator_names() if n.startswith("cortex_m::")]
    result = {"operators": operators, "mismatches": mismatches, "runtime_cortex_m_kernels": registered}
    if registered:
        module = portable_lib._load_for_executorch_from_buffer(data)
        shape = [t.sizes for t in [plan.values[i].val for i in plan.inputs]][0]
        result["output"] = module.forward([torch.zeros(shape)])[0].tolist()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
