"""Graph surgery for backend delegation: cut a partition out of a core-ATen graph
into a standalone GraphModule, and replace it by one delegate call node.

The delegate call node is a ``call_function`` node whose target is
:func:`call_delegate`; its arguments are the delegate's input nodes, its
``meta["val"]`` is the tuple of its outputs' fake tensors and
``meta["kiln_delegate"]`` holds the :class:`~kiln.ir.LoweredDelegate`.
``getitem`` nodes select its outputs. :func:`kiln.passes.to_out_variants` turns
it into a ``DelegateCall`` instruction.
"""

from __future__ import annotations

import heapq
import operator
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from kiln import ExportError
from kiln.ir.method_graph import LoweredDelegate

DELEGATE_META_KEY = "kiln_delegate"

_DEQUANTIZE_OPS = (
    "quantized_decomposed::dequantize_per_tensor",
    "quantized_decomposed::dequantize_per_channel",
)
_CONSTANT_INPUT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


def call_delegate(*inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Target of delegate call nodes. Only a marker: the backend runs the subgraph."""
    raise RuntimeError(
        "a Kiln delegate call cannot run in PyTorch; run the .pte program on a runtime "
        "with the delegate's backend"
    )


def is_delegate_call(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and node.target is call_delegate


def operator_name(node: torch.fx.Node) -> str:
    """``"aten::convolution"`` for an OpOverload target, the function's name otherwise."""
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return target.name()
    return getattr(target, "__name__", str(target))


def is_dequantize(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and operator_name(node) in _DEQUANTIZE_OPS


def copy_graph_module(program: ExportedProgram) -> torch.fx.GraphModule:
    """A new GraphModule with a copy of ``program``'s graph (node names and meta kept),
    so that delegation never changes the caller's program."""
    graph = torch.fx.Graph()
    copies: dict[torch.fx.Node, torch.fx.Node] = {}
    outputs = graph.graph_copy(program.graph_module.graph, copies)
    graph.output(outputs)
    _keep_names(copies)
    module = torch.fx.GraphModule(program.graph_module, graph)
    module.meta.update(program.graph_module.meta)  # what earlier stages noted (the quantizer's precision)
    return module


def _keep_names(copies: Mapping[torch.fx.Node, torch.fx.Node]) -> None:
    """Gives each copied node its original's name.

    A new graph's namespace renames a node whose name shadows a Python builtin
    (``input`` -> ``input_1``), but torch.export names placeholders after the
    forward's arguments, builtins included (``nn.Sequential.forward(input)``),
    and the graph signature refers to them by those names.
    """
    for original, copied in copies.items():
        if copied.name != original.name:
            _set_name(copied, original.name)


def _set_name(node: torch.fx.Node, name: str) -> None:
    """Names ``node`` exactly ``name`` (no node of its graph may hold it), as
    torch.export names placeholders: ``Node._rename`` would add a suffix to a
    builtin's name or to a name an erased node once had."""
    node.name = name
    node.graph._graph_namespace._rename_object(node, name)


def constant_tensors(program: ExportedProgram) -> dict[str, torch.Tensor]:
    """Placeholder name -> tensor for every parameter, buffer and lifted constant."""
    constants: dict[str, torch.Tensor] = {}
    for spec in program.graph_signature.input_specs:
        if spec.kind not in _CONSTANT_INPUT_KINDS:
            continue
        data = program.state_dict.get(spec.target)
        if data is None:
            data = program.constants.get(spec.target)
        if isinstance(data, torch.Tensor):
            constants[spec.arg.name] = data
    return constants


def duplicate_shared_dequantize(graph: torch.fx.Graph) -> int:
    """Gives every dequantize node a single user (copies it per extra user).

    A partition must take int8 tensors in: a dequantize shared between a delegated
    and a CPU consumer would otherwise force a float tensor across the boundary.
    Returns the number of copies made.
    """
    copies = 0
    for node in list(graph.nodes):
        if not is_dequantize(node) or len(node.users) < 2:
            continue
        for user in list(node.users)[1:]:
            with graph.inserting_after(node):
                duplicate = graph.node_copy(node, lambda n: n)
            user.replace_input_with(node, duplicate)
            copies += 1
    return copies


@dataclass
class Subgraph:
    """A partition cut out of the graph.

    ``graph_module`` has one placeholder per entry of ``inputs`` (same order), a
    ``get_attr`` per constant it uses (real tensors, also in ``meta["val"]``) and
    returns a tuple with one value per entry of ``outputs``.
    """

    name: str
    graph_module: torch.fx.GraphModule
    inputs: list[torch.fx.Node]  # nodes of the main graph that feed the partition
    outputs: list[torch.fx.Node]  # partition nodes whose values are used outside it


def _attribute_name(name: str, taken: set[str]) -> str:
    base = re.sub(r"\W", "_", name) or "constant"
    candidate, index = base, 1
    while candidate in taken:
        candidate, index = f"{base}_{index}", index + 1
    taken.add(candidate)
    return candidate


def extract_subgraph(
    nodes: Iterable[torch.fx.Node], constants: Mapping[str, torch.Tensor], name: str
) -> Subgraph:
    """Copies ``nodes`` (one partition, any order) into a standalone GraphModule."""
    members = list(nodes)
    if not members:
        raise ExportError(f"partition {name} is empty")
    order = {node: index for index, node in enumerate(members[0].graph.nodes)}
    members.sort(key=order.__getitem__)
    member_set = set(members)
    root = torch.nn.Module()
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    inputs: list[torch.fx.Node] = []
    attribute_names: set[str] = set()

    def lookup(node: torch.fx.Node) -> torch.fx.Node:
        if node in env:
            return env[node]
        if node.op == "placeholder" and node.name in constants:
            attribute = _attribute_name(node.name, attribute_names)
            root.register_buffer(attribute, constants[node.name])
            copied = graph.get_attr(attribute)
            copied.meta["val"] = constants[node.name]
        else:
            copied = graph.placeholder(_attribute_name(node.name, attribute_names))
            copied.meta.update(node.meta)
            inputs.append(node)
        env[node] = copied
        return copied

    for node in members:
        for source in node.all_input_nodes:
            if source not in member_set:
                lookup(source)
        env[node] = graph.node_copy(node, lookup)
    outputs = [n for n in members if any(u not in member_set for u in n.users)]
    if not outputs:
        raise ExportError(f"partition {name} produces nothing used outside it")
    graph.output(tuple(env[n] for n in outputs))
    return Subgraph(name, torch.fx.GraphModule(root, graph, class_name=name), inputs, outputs)


def _output_value(node: torch.fx.Node) -> Any:
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor):
        raise ExportError(
            f"delegate output '{node.name}' is a {type(value).__name__}, not one tensor"
        )
    return value


def replace_with_delegate(
    graph: torch.fx.Graph, subgraph: Subgraph, lowered: LoweredDelegate, members: Iterable[torch.fx.Node]
) -> torch.fx.Node:
    """Replaces the partition's nodes by one delegate call; returns the call node.

    The ``getitem`` node selecting each output takes the name of the node it
    replaces, so that every value of the rewritten graph keeps the name it has in
    the program (a later delegate's inputs, the report and the evaluation of the
    delegated program against the original one refer to values by name).
    """
    member_set = set(members)
    output_node = next(n for n in reversed(graph.nodes) if n.op == "output")
    selectors: list[tuple[torch.fx.Node, str]] = []
    with graph.inserting_before(output_node):
        call = graph.create_node(
            "call_function", call_delegate, tuple(subgraph.inputs), name=f"delegate_{lowered.name}"
        )
        call.meta["val"] = tuple(_output_value(n) for n in subgraph.outputs)
        call.meta[DELEGATE_META_KEY] = lowered
        for index, produced in enumerate(subgraph.outputs):
            selected = graph.call_function(operator.getitem, (call, index))
            selected.meta["val"] = produced.meta["val"]
            produced.replace_all_uses_with(
                selected, delete_user_cb=lambda user: user not in member_set and user is not selected
            )
            selectors.append((selected, produced.name))
    order = {node: index for index, node in enumerate(graph.nodes)}
    for node in sorted(member_set, key=order.__getitem__, reverse=True):
        graph.erase_node(node)
    for selected, name in selectors:
        _set_name(selected, name)
    sort_topologically(graph)
    return call


def sort_topologically(graph: torch.fx.Graph) -> None:
    """Reorders nodes so every node follows its inputs, keeping the current order
    wherever it is already valid (placeholders first, output last)."""
    nodes = list(graph.nodes)
    position = {node: index for index, node in enumerate(nodes)}
    waiting = {node: len(set(node.all_input_nodes)) for node in nodes}
    ready = [(position[n], n.name) for n in nodes if waiting[n] == 0]
    by_name = {node.name: node for node in nodes}
    heapq.heapify(ready)
    ordered: list[torch.fx.Node] = []
    while ready:
        _, name = heapq.heappop(ready)
        node = by_name[name]
        ordered.append(node)
        for user in node.users:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (position[user], user.name))
    if len(ordered) != len(nodes):
        stuck = [n.name for n in nodes if waiting[n] > 0][:5]
        raise ExportError(f"delegation made the graph cyclic (nodes {stuck} wait on each other)")
    output_node = ordered[-1]
    for node in ordered[:-1]:
        output_node.prepend(node)
