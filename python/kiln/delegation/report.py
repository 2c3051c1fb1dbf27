"""What the partitioner decided for every operator node, and why.

A :class:`PartitionReport` holds one :class:`NodeDecision` per operator node of
the graph (delegated or not, with the reason when not) and one
:class:`PartitionSummary` per delegated subgraph. It prints as a table
(operator, count, delegated?, reason) and saves as ``partition_report.txt`` and
``partition_report.json``.
"""

from __future__ import annotations

import collections
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

#: ``graph_module.meta`` key under which a quantizer leaves, in the quantized program, the
#: operators it kept at a lower precision than asked for (one line each, with the reason).
PRECISION_NOTES_KEY = "kiln_precision_notes"


@dataclass(frozen=True)
class NodeDecision:
    """The partitioner's verdict on one FX node."""

    node: str  # FX node name
    operator: str  # "aten::convolution", "quantized_decomposed::quantize_per_tensor", ...
    target: str  # "ethos-u55-128"
    delegated: bool
    reason: str = ""  # why the node stays on the CPU (empty when delegated)
    partition: str = ""  # name of the delegated subgraph holding it


@dataclass
class PartitionSummary:
    """One delegated subgraph: its nodes and what they compute."""

    name: str
    nodes: list[str]
    operator_counts: dict[str, int]
    inputs: list[str]  # FX nodes of the main graph it reads (int8 tensors, int32 inputs as they are)
    outputs: list[str]  # its nodes whose values leave it (int8 tensors)


@dataclass
class PartitionReport:
    """Every decision the partitioner made for one graph."""

    target: str
    decisions: list[NodeDecision] = field(default_factory=list)
    partitions: list[PartitionSummary] = field(default_factory=list)
    # Subgraphs the backend rejected and that were tried again in parts, with the reason.
    splits: list[str] = field(default_factory=list)
    # Operators the quantizer kept at a lower precision than asked for (16-bit), with why.
    precision: list[str] = field(default_factory=list)

    @property
    def delegated_nodes(self) -> int:
        return sum(1 for d in self.decisions if d.delegated)

    @property
    def cpu_nodes(self) -> int:
        return sum(1 for d in self.decisions if not d.delegated)

    def rejections(self) -> list[NodeDecision]:
        return [d for d in self.decisions if not d.delegated]

    def decision(self, node: str) -> NodeDecision:
        for entry in self.decisions:
            if entry.node == node:
                return entry
        raise KeyError(f"no decision for node {node!r}")

    def fall_back(self, partition: str, reason: str) -> None:
        """Moves every node of ``partition`` back to the CPU with ``reason``."""
        self.decisions = [
            NodeDecision(d.node, d.operator, d.target, False, reason) if d.partition == partition else d
            for d in self.decisions
        ]
        self.partitions = [p for p in self.partitions if p.name != partition]

    def split(self, partition: str, pieces: list[PartitionSummary], reason: str) -> None:
        """Replaces ``partition`` by ``pieces`` (which hold its nodes between them), because
        the backend rejected it for ``reason``."""
        self.splits.append(f"subgraph {partition} was rejected ({reason}); tried again as "
                           f"{', '.join(piece.name for piece in pieces)}")
        owner = {node: piece.name for piece in pieces for node in piece.nodes}
        self.decisions = [
            replace(d, partition=owner.get(d.node, d.partition)) if d.partition == partition else d
            for d in self.decisions
        ]
        index = next(i for i, p in enumerate(self.partitions) if p.name == partition)
        self.partitions[index:index + 1] = pieces

    def rows(self) -> list[tuple[str, int, bool, str]]:
        """(operator, count, delegated, reason) with identical rows merged,
        delegated rows first, then by operator."""
        counts: collections.Counter[tuple[str, bool, str]] = collections.Counter(
            (d.operator, d.delegated, d.reason) for d in self.decisions
        )
        ordered = sorted(counts.items(), key=lambda item: (not item[0][1], item[0][0], item[0][2]))
        return [(op, count, delegated, reason) for (op, delegated, reason), count in ordered]

    def table(self) -> str:
        rows = self.rows()
        width = max([len("operator"), *(len(r[0]) for r in rows)])
        lines = [
            f"partition report for {self.target}: {self.delegated_nodes} node(s) delegated in "
            f"{len(self.partitions)} subgraph(s), {self.cpu_nodes} on the CPU",
            f"  {'operator':<{width}}  {'count':>5}  {'delegated':<9}  reason",
        ]
        for op, count, delegated, reason in rows:
            lines.append(f"  {op:<{width}}  {count:>5}  {'yes' if delegated else 'no':<9}  {reason}")
        for partition in self.partitions:
            ops = ", ".join(f"{name} x{n}" for name, n in partition.operator_counts.items())
            lines.append(f"  subgraph {partition.name}: {len(partition.nodes)} nodes ({ops})")
        lines.extend(f"  {split}" for split in self.splits)
        lines.extend(f"  precision: {note}" for note in self.precision)
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps(
            {
                "target": self.target,
                "delegated_nodes": self.delegated_nodes,
                "cpu_nodes": self.cpu_nodes,
                "rows": [
                    {"operator": op, "count": n, "delegated": d, "reason": r} for op, n, d, r in self.rows()
                ],
                "decisions": [asdict(d) for d in self.decisions],
                "partitions": [asdict(p) for p in self.partitions],
                "splits": self.splits,
                "precision": self.precision,
            },
            indent=2,
        )

    def save(self, folder: Path) -> tuple[Path, Path]:
        """Writes ``partition_report.txt`` and ``partition_report.json`` into ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        text, data = folder / "partition_report.txt", folder / "partition_report.json"
        text.write_text(self.table() + "\n")
        data.write_text(self.to_json() + "\n")
        return text, data
