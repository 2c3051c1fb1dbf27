"""Kiln's intermediate form of a method: tensors, scalars and out-variant kernel or delegate
calls in execution order (:mod:`kiln.ir.method_graph`).

Every stage after ``torch.export`` works on it: :mod:`kiln.passes` builds it, :mod:`kiln.memory`
plans it, :mod:`kiln.serialize` emits it. It needs numpy only, no torch.
"""

from __future__ import annotations

from kiln.ir.method_graph import (
    Allocation,
    Call,
    DelegateCall,
    KernelCall,
    LoweredDelegate,
    MethodGraph,
    TensorRole,
    TensorValue,
)

__all__ = [
    "Allocation",
    "Call",
    "DelegateCall",
    "KernelCall",
    "LoweredDelegate",
    "MethodGraph",
    "TensorRole",
    "TensorValue",
]
