"""``XnnpackBackend.preprocess``: one delegated subgraph -> XNNPACK graph -> payload bytes.

The payload is what ExecuTorch's ``XnnpackBackend`` and Kiln's read
(:mod:`kiln.backends.xnnpack.payload`); XNNPACK delegates carry no compile specs.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from kiln.backends.xnnpack.graph import Graph
from kiln.backends.xnnpack.lowering import lower_subgraph
from kiln.backends.xnnpack.payload import serialize

logger = logging.getLogger(__name__)

BACKEND_ID = "XnnpackBackend"


@dataclass
class XnnpackDelegateReport:
    """What one XNNPACK delegate holds."""

    name: str
    backend_id: str = BACKEND_ID
    target: str = "xnnpack"
    xnnpack_nodes: dict[str, int] = field(default_factory=dict)  # node kind -> count
    values: int = 0
    constant_bytes: int = 0
    blob_bytes: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def summary_lines(self) -> list[str]:
        nodes = ", ".join(f"{kind} {n}" for kind, n in sorted(self.xnnpack_nodes.items(), key=lambda kv: -kv[1]))
        return [
            f"delegate {self.name}: {self.backend_id}, blob {self.blob_bytes:,} B "
            f"(constants {self.constant_bytes:,} B)",
            f"  XNNPACK nodes: {sum(self.xnnpack_nodes.values())} ({nodes}), values: {self.values}",
        ]


@dataclass
class PreprocessResult:
    blob: bytes
    compile_specs: list[tuple[str, bytes]]
    graph: Graph
    report: XnnpackDelegateReport


class XnnpackBackend:
    """Compiles subgraphs chosen by :class:`kiln.backends.xnnpack.XnnpackPartitioner`."""

    id = BACKEND_ID

    @staticmethod
    def preprocess(graph_module: torch.fx.GraphModule, compile_spec: Any = None, *, name: str = "xnnpack",
                   nhwc_io: bool = False) -> PreprocessResult:
        """Lowers ``graph_module`` (4-D inputs/outputs NHWC, see the partitioner) to a payload.

        Raises:
            kiln.backends.xnnpack.lowering.XnnpackLoweringError: a node XNNPACK cannot
                express; ``kiln.export`` then leaves the subgraph on the CPU with that reason.
        """
        started = time.perf_counter()
        graph = lower_subgraph(graph_module)
        lowered = time.perf_counter()
        blob = serialize(graph)
        report = XnnpackDelegateReport(
            name, xnnpack_nodes=graph.operator_counts(), values=len(graph.values),
            constant_bytes=sum(len(v.data) for v in graph.values if v.data is not None), blob_bytes=len(blob),
            seconds={"lower": lowered - started, "serialize": time.perf_counter() - lowered},
        )
        logger.info("%s: %d XNNPACK nodes, %d values, %d B payload", name, len(graph.nodes), len(graph.values),
                    len(blob))
        return PreprocessResult(blob, [], graph, report)
