"""An XNNPACK subgraph as plain data: values (tensors) and nodes (operators).

This is what :mod:`kiln.backends.xnnpack.lowering` builds from an FX partition and
:mod:`kiln.backends.xnnpack.payload` serializes into the delegate payload. Names
follow the payload schema (``XNNConv2d``, ``input1_id``, ...) so that a node's
``params`` map one to one onto the fields of its schema table.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Optional, Union

# Value flags and the "no value" id, as XNNPACK's subgraph API numbers them.
EXTERNAL_INPUT = 0x1
EXTERNAL_OUTPUT = 0x2
INVALID_VALUE_ID = 0xFFFFFFFF


class Datatype(enum.IntEnum):
    """Element types of XNNPACK values (numbered like XNNPACK's ``enum xnn_datatype``)."""

    FP32 = 1
    QINT8 = 3  # int8, one scale and zero point per tensor (activations)
    QINT32 = 5  # int32, one scale per tensor (bias of a per-tensor weight)
    QCINT8 = 6  # int8, one scale per channel, zero point 0 (weights)
    QCINT32 = 7  # int32, one scale per channel (bias of a per-channel weight)


@dataclass(frozen=True)
class PerTensorQuant:
    scale: float
    zero_point: int


@dataclass(frozen=True)
class PerChannelQuant:
    scales: tuple[float, ...]
    channel_dim: int


Quant = Union[PerTensorQuant, PerChannelQuant, None]


@dataclass
class Value:
    """One tensor of the subgraph. ``dims`` are as XNNPACK sees them (NHWC for images)."""

    id: int
    datatype: Datatype
    dims: tuple[int, ...]
    quant: Quant = None
    data: Optional[bytes] = None  # little-endian contents of a constant
    external_id: int = INVALID_VALUE_ID
    flags: int = 0


@dataclass
class Node:
    """One operator: ``kind`` names the payload's node union member (``XNNConv2d``),
    ``params`` its table's fields (``input1_id``, ``padding_top``, ...)."""

    kind: str
    params: dict[str, Any]
    output_min_max: Optional[tuple[float, float]] = None
    debug_handle: int = 0


@dataclass
class Graph:
    """Values and nodes in definition order, and which values the delegate exchanges."""

    values: list[Value] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    input_ids: list[int] = field(default_factory=list)
    output_ids: list[int] = field(default_factory=list)

    def add_value(self, datatype: Datatype, dims: tuple[int, ...], quant: Quant = None,
                  data: Optional[bytes] = None) -> int:
        value = Value(len(self.values), datatype, tuple(int(d) for d in dims), quant, data)
        self.values.append(value)
        return value.id

    def add_node(self, kind: str, output_min_max: Optional[tuple[float, float]] = None, **params: Any) -> Node:
        node = Node(kind, params, output_min_max)
        self.nodes.append(node)
        return node

    def mark_input(self, value_id: int) -> None:
        """Makes ``value_id`` the next delegate input (external ids: inputs first, then outputs)."""
        self._mark(value_id, EXTERNAL_INPUT)
        self.input_ids.append(value_id)

    def mark_output(self, value_id: int) -> None:
        self._mark(value_id, EXTERNAL_OUTPUT)
        self.output_ids.append(value_id)

    def _mark(self, value_id: int, flag: int) -> None:
        value = self.values[value_id]
        value.flags |= flag
        value.external_id = len(self.input_ids) + len(self.output_ids)

    @property
    def num_externs(self) -> int:
        return len(self.input_ids) + len(self.output_ids)

    def operator_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node in self.nodes:
            counts[node.kind] = counts.get(node.kind, 0) + 1
        return counts
