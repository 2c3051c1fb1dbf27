"""Runs in the ExecuTorch venv (never imports kiln): parses a .pte with ExecuTorch's
deserializer and prints its delegates as one JSON line.

Usage: python executorch_read_delegates.py PROGRAM.pte
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> int:
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import DelegateCall

    loaded = deserialize_pte_binary(Path(sys.argv[1]).read_bytes())
    program = getattr(loaded, "program", loaded)
    plan = program.execution_plan[0]
    # The deserializer moves segment data back inline, indexed by the delegate.
    blobs = [len(program.backend_delegate_data[d.processed.index].data) for d in plan.delegates]
    calls = [list(i.instr_args.args) for chain in plan.chains for i in chain.instructions
             if isinstance(i.instr_args, DelegateCall)]
    print(json.dumps({
        "ids": [d.id for d in plan.delegates],
        "blob_sizes": blobs,
        "compile_spec_keys": [[s.key for s in d.compile_specs] for d in plan.delegates],
        "delegate_call_args": calls,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
