"""Adds aten calls to a graph before annotation, with the metadata the annotator reads.

The rewrites that run before annotation (recurrent layers unrolled, attention written
out) insert operators in the middle of an exported graph. Each new node needs a fake
value (``meta["val"]``: shapes and dtypes for the annotator and PT2E's observers) and
the module stack of the node it replaces (module-scoped quantizer configs match on it).
"""

from __future__ import annotations

import operator
from typing import Any

import torch
from torch.fx import Graph, GraphModule, Node

from kiln.delegation.quantizer.scopes import SUBSCOPE_KEY

aten = torch.ops.aten


class Emitter:
    """Adds aten calls before ``anchor``, computing their fake values for ``meta["val"]``."""

    def __init__(self, graph: Graph, anchor: Node) -> None:
        self.graph = graph
        self.anchor = anchor
        #: Written as ``meta[SUBSCOPE_KEY]`` on the nodes emitted while set: a name below the
        #: anchor's module (``rnn.l0.steps.48``) that module-scoped configs can address.
        self.subscope: str | None = None

    def __call__(self, target: Any, *args: Any, **kwargs: Any) -> Node:
        with self.graph.inserting_before(self.anchor):
            node = self.graph.call_function(target, args, kwargs)
        fake_args, fake_kwargs = torch.fx.map_arg((args, kwargs), lambda n: n.meta["val"])
        node.meta["val"] = target(*fake_args, **fake_kwargs)
        self._inherit(node)
        return node

    def constant(self, module: GraphModule, name: str, value: torch.Tensor) -> Node:
        """A ``get_attr`` of ``value``, registered on ``module`` as a buffer named ``name``
        (a unique variant of it)."""
        unique, index = name, 0
        while hasattr(module, unique):
            index += 1
            unique = f"{name}_{index}"
        module.register_buffer(unique, value)
        with self.graph.inserting_before(self.anchor):
            node = self.graph.get_attr(unique)
        node.meta["val"] = _fake_mode(self.anchor).from_tensor(value)
        self._inherit(node)
        return node

    def split(self, value: Node, sizes: list[int]) -> list[Node]:
        parts = self(aten.split_with_sizes.default, value, sizes, -1)
        return [self(operator.getitem, parts, i) for i in range(len(sizes))]

    def _inherit(self, node: Node) -> None:
        node.meta["nn_module_stack"] = self.anchor.meta.get("nn_module_stack", {})
        node.meta["stack_trace"] = self.anchor.meta.get("stack_trace")
        if self.subscope is not None:
            node.meta[SUBSCOPE_KEY] = self.subscope


def _fake_mode(node: Node) -> Any:
    """The fake tensor mode of the values around ``node`` (constants must share it)."""
    values = [source.meta.get("val") for source in node.all_input_nodes] + [node.meta.get("val")]
    mode = torch._guards.detect_fake_mode([v for v in values if isinstance(v, torch.Tensor)])
    if mode is None:
        from torch._subclasses.fake_tensor import FakeTensorMode

        mode = FakeTensorMode(allow_non_fake_inputs=True)
    return mode
