"""Kiln's C++ runtime from Python: load a .pte program and run its methods.

    from kiln.runtime import Module
    (logits,) = Module("model.pte").forward(image)      # methods by name, state kept

    from kiln.runtime import Runtime                    # the lower-level API
    method = Runtime.get().load_program("model.pte").load_method("forward")
    (logits,) = method.execute([image])
"""

from kiln.runtime.errors import KilnRuntimeError
from kiln.runtime.meta import MethodMeta, StateSpec, ValueSpec
from kiln.runtime.executor import DEFAULT_TEMP_BYTES, Method, Program, Runtime, TimedRun
from kiln.runtime.module import Module

__all__ = [
    "DEFAULT_TEMP_BYTES",
    "KilnRuntimeError",
    "Method",
    "MethodMeta",
    "Module",
    "Program",
    "Runtime",
    "StateSpec",
    "TimedRun",
    "ValueSpec",
]
