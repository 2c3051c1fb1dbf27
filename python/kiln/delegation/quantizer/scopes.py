"""Names of the places a graph node comes from, as a quantizer's configs address them.

A module's name is as in ``named_modules()`` (``encoder.conv1``), read from the
``nn_module_stack`` that ``torch.export`` records on every node. Below the innermost module,
the pieces a rewrite writes out for one module's forward have names of their own, recorded
as ``node.meta[SUBSCOPE_KEY]`` (emit.py writes it): a recurrent layer's input projection
``rnn.l0.input_projection`` and its cell at time step T ``rnn.l0.steps.T`` (recurrent.py).
"""

from __future__ import annotations

import re

from torch.fx import Node

#: A node's name below its innermost module (a recurrent layer's time step): module-scoped
#: configs take it as they take module names.
SUBSCOPE_KEY = "kiln_subscope"

#: ``rnn.l0.input_projection``, ``rnn.l0.steps.48``: the names of a recurrent layer's parts.
RECURRENT_PART = re.compile(r"^(?P<layer>.+)\.l(?P<index>\d+)\.(?:input_projection|steps\.(?P<step>\d+))$")


def input_projection_scope(layer: str, index: int) -> str:
    """The name of layer ``index``'s input projection (all steps at once) in module ``layer``."""
    return f"{layer}.l{index}.input_projection"


def step_scope(layer: str, index: int, step: int) -> str:
    """The name of layer ``index``'s cell at time ``step`` in module ``layer``."""
    return f"{layer}.l{index}.steps.{step}"


def module_path(path: str) -> str:
    """``nn_module_stack`` paths may carry dynamo's ``L['self'].`` prefix; drop it."""
    for prefix in ("L['self'].", "L__self__."):
        if path.startswith(prefix):
            path = path[len(prefix):]
    return path


def innermost_module(node: Node) -> tuple[str, str] | None:
    """(name, type name) of the innermost submodule whose forward holds ``node`` (None for
    the model's own forward). Not always a leaf: attention computes its input projection in
    its own forward."""
    stack = list((node.meta.get("nn_module_stack") or {}).values())
    if not stack:
        return None
    path, module_type = stack[-1]
    name = module_path(str(path))
    if not name or name.startswith("L["):
        return None
    return name, getattr(module_type, "__name__", str(module_type).rsplit(".", 1)[-1])
