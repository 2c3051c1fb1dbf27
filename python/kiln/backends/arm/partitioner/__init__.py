"""Ethos-U partitioner: support checks per target, partitions with int8 boundaries,
and a report that gives every node left on the CPU its reason."""

from kiln.backends.arm.partitioner.checks import CheckContext, SupportCheck, checks_for
from kiln.delegation.grouping import Partition
from kiln.backends.arm.partitioner.partitioner import EthosUPartitioner, PartitionResult
from kiln.delegation.report import NodeDecision, PartitionReport, PartitionSummary

__all__ = [
    "CheckContext",
    "EthosUPartitioner",
    "NodeDecision",
    "Partition",
    "PartitionReport",
    "PartitionResult",
    "PartitionSummary",
    "SupportCheck",
    "checks_for",
]
