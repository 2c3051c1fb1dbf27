"""Model Explorer overlays: Kiln's profile as node data on the graph of a ``.pte``.

Model Explorer opens ``.pte`` files with the ``executorch-extension-model-explorer``
adapter (``model-explorer --extensions=executorch_extension_model_explorer mv2.pte``; a
delegated program's TOSA graphs appear when their ``.tosa`` files, from ``kiln-aot
--intermediates``, are given as ``delegate_file_paths``). That adapter names the node of
instruction ``i`` of chain ``c`` of method ``m`` ``"{m}_{c}_{i}"``; :func:`write_node_data`
writes Model Explorer's node-data JSON (``--node_data_paths``) keyed that way, so that
the time of every instruction colours its node.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Union

#: Green for the fastest node, red for the slowest.
_GRADIENT = [{"stop": 0, "bgColor": "#d9f0d3"}, {"stop": 0.5, "bgColor": "#fee08b"}, {"stop": 1, "bgColor": "#d73027"}]


def node_id(method: str, instruction: int, chain: int = 0) -> str:
    """The id the ExecuTorch PTE adapter gives an instruction's node."""
    return f"{method}_{chain}_{instruction}"


def node_data(inspector: Any, method: str = "") -> dict[str, Any]:
    """{graph id: {"results": {node id: {"value": average time}}, ...}} for the instructions
    of ``inspector`` (NPU operations are summed into their delegate call's node)."""
    name = method or (inspector.method.name if inspector.method is not None else "forward")
    totals: dict[int, float] = {}
    for row in inspector.rows:
        if row.is_npu_operation:
            continue
        totals[row.instruction] = totals.get(row.instruction, 0.0) + row.average
    results = {node_id(name, index): {"value": round(value, 3)} for index, value in sorted(totals.items())}
    return {name: {"name": f"time ({inspector.time_unit})", "results": results, "gradient": _GRADIENT}}


def write_node_data(inspector: Any, path: Union[str, Path], method: str = "") -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(node_data(inspector, method), indent=1))
    return path
