"""The delegation toolkit every backend builds on (Ethos-U, XNNPACK and Cortex-M are peers
on it and import none of each other's modules):

* :mod:`.interfaces`: what :func:`kiln.export` asks of a backend (:class:`Partitioner`,
  :class:`Backend`, :class:`PreprocessResult`, :class:`PartitionResult`);
* :mod:`.grouping`: quantized groups and cycle-free partitions grown from chosen nodes;
* :mod:`.report`: the partition report (every node's decision and reason);
* :mod:`.nodes`: questions every backend asks of an FX node (arguments, shapes);
* :mod:`.quantizer`: the PT2E quantizer base, annotation rules and configs.
"""

from kiln.delegation.grouping import Partition
from kiln.delegation.interfaces import Backend, PartitionResult, Partitioner, PreprocessResult
from kiln.delegation.report import NodeDecision, PartitionReport, PartitionSummary

__all__ = [
    "Backend",
    "NodeDecision",
    "Partition",
    "PartitionReport",
    "PartitionResult",
    "PartitionSummary",
    "Partitioner",
    "PreprocessResult",
]
