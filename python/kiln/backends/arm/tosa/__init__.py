"""TOSA 1.0 lowering of quantized delegated subgraphs (the Ethos-U compile path's middle).

``lower_to_tosa(subgraph, compile_spec)`` -> :class:`TosaSubgraph` (flatbuffer, IO,
op counts, ``run_reference``); ``is_lowerable(node, compile_spec, constants)`` tells
the partitioner whether (and why not) an operator can be lowered, and
``group_problem(nodes, compile_spec)`` whether a quantized group of them can.
"""

from kiln.backends.arm.tosa.context import TosaLoweringError, VelaLimitError
from kiln.backends.arm.tosa.lowering import lower_to_tosa
from kiln.backends.arm.tosa.subgraph import TosaIO, TosaReferenceError, TosaSubgraph
from kiln.backends.arm.tosa.support import group_problem, is_lowerable

__all__ = ["TosaIO", "TosaLoweringError", "TosaReferenceError", "TosaSubgraph", "group_problem", "is_lowerable",
           "VelaLimitError", "lower_to_tosa"]
