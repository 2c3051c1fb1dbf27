"""What :func:`kiln.export` asks of a backend: a partitioner and the backend's preprocess.

A backend's partitioner (``EthosUPartitioner``, ``XnnpackPartitioner``) subclasses
:class:`Partitioner` and decides, node by node, what the backend takes; its ``backend``
compiles each partition that :func:`kiln.passes.delegation.extract_subgraph` cuts out into a
blob the runtime's backend of the same ``id`` loads. A subgraph the backend rejects (a
:class:`kiln.KilnError`) is offered to :meth:`Partitioner.split`, and each part tried again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from kiln.delegation.grouping import Partition
from kiln.delegation.report import PartitionReport


@dataclass
class PartitionResult:
    """The partitions to delegate (node lists in graph order) and the report."""

    partitions: list[Partition]
    report: PartitionReport


class PreprocessResult(Protocol):
    """What a backend made of one subgraph (backends add their own fields)."""

    blob: bytes  # what the runtime's backend loads (stored in a segment of the .pte)
    compile_specs: Sequence[tuple[str, bytes]]  # key/value pairs stored with the blob
    report: Any  # the backend's report on the subgraph (sizes, operators, timings)


class Backend(Protocol):
    """Compiles one partition; ``id`` is the name the runtime looks the backend up by."""

    id: str

    def preprocess(self, graph_module: torch.fx.GraphModule, compile_spec: Any, *, name: str,
                   nhwc_io: bool) -> PreprocessResult: ...


class Partitioner(Protocol):
    """Chooses the nodes a backend takes; subclasses get the defaults below."""

    #: The backend's own compile spec (e.g. ``EthosUCompileSpec``), passed to preprocess.
    compile_spec: Any = None
    #: Ask for NHWC 4-D delegate inputs/outputs where they are the program's own.
    nhwc_io: bool = False
    #: Every 4-D delegate input/output is channels-last, with CPU permutes around the call.
    channels_last_io: bool = False

    @property
    def backend(self) -> Backend: ...

    def partition(self, graph_module: torch.fx.GraphModule,
                  constants: Mapping[str, torch.Tensor]) -> PartitionResult: ...

    def split(self, partition: Partition, graph_module: torch.fx.GraphModule,
              constants: Mapping[str, torch.Tensor], report: PartitionReport, reason: str) -> list[Partition]:
        """Smaller partitions that together hold a rejected ``partition`` ([]: none)."""
        return []
