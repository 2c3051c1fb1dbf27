"""From per-node verdicts to delegated partitions with int8 boundaries and no cycles.

A quantized PT2E graph alternates ``dequantize -> float ops -> quantize``. The
float ops between one set of dequantize nodes and the next quantize nodes form a
*quantized group* (e.g. conv + relu fused by the quantizer): the NPU can take
the whole group or none of it, because only the int8 tensors at its edges may
cross a delegate boundary. A group is delegable when all its external inputs are
dequantized (int8/int16) or constant, all its external users are int8/int16
quantize nodes, every node passes the support checks (which judge operators
alone), and the TOSA lowering can take the group's quantization as a whole
(``checks.group_objection``: no float value inside it used before it is quantized,
except the activations, views and pointwise TABLE regions the lowering fuses).

Partitions are then grown over the delegable nodes plus their input dequantize
nodes, constant (weight) nodes and output quantize nodes, in topological order,
joining a producer's partition only when that cannot create a cycle (a path from
the partition back into it through a node outside it).
"""

from __future__ import annotations

import heapq
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Optional

import torch

from kiln.passes.delegation import is_delegate_call, is_dequantize, operator_name
from kiln.passes.aten_out_variants import COMPILE_TIME_CHECKS
from kiln.passes.constant_values import CREATION_OPERATORS

QUANTIZE_OPS = frozenset(
    {"quantized_decomposed::quantize_per_tensor", "quantized_decomposed::quantize_per_channel"}
)
NPU_DTYPES = (torch.int8, torch.int16)
# Operators reading a table at integer positions, and which argument holds the positions:
# that input crosses the delegate boundary as it is (int32: what the NPU's GATHER reads).
INDEX_OPERANDS = {"aten::embedding": 1, "aten::index_select": 2}
NPU_INDEX_DTYPE = torch.int32
EXACT_DTYPES = (torch.int32, torch.bool)


def is_index_operand(node: torch.fx.Node, source: torch.fx.Node) -> bool:
    """True if ``source`` is the positions argument of an index-reading operator ``node``."""
    position = INDEX_OPERANDS.get(operator_name(node)) if node.op == "call_function" else None
    return position is not None and len(node.args) > position and node.args[position] is source


def is_quantize(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and operator_name(node) in QUANTIZE_OPS


def quantize_dtype(node: torch.fx.Node) -> Optional[torch.dtype]:
    """dtype argument of a quantize/dequantize node (its last positional argument)."""
    for value in (*reversed(node.args), node.kwargs.get("dtype")):
        if isinstance(value, torch.dtype):
            return value
    return None


def is_operator_node(node: torch.fx.Node) -> bool:
    """Nodes the report lists: calls that compute something (not getitem, not checks)."""
    return (
        node.op == "call_function"
        and node.target is not operator.getitem
        and not is_delegate_call(node)
        and operator_name(node) not in COMPILE_TIME_CHECKS
    )


def constant_nodes(graph: torch.fx.Graph, constants: Mapping[str, torch.Tensor]) -> frozenset[torch.fx.Node]:
    """Nodes computed from constants only: weights, their dequantize and transposes, and
    what creation operators (a zero initial state, index arithmetic) compute."""
    found: set[torch.fx.Node] = set()
    for node in graph.nodes:
        if node.op == "placeholder":
            if node.name in constants:
                found.add(node)
        elif node.op == "call_function" and node.all_input_nodes:
            if all(source in found for source in node.all_input_nodes):
                found.add(node)
        elif node.op == "call_function" and operator_name(node) in CREATION_OPERATORS:
            found.add(node)
    return frozenset(found)


def constants_used_only_by(selected: set[torch.fx.Node], constant: frozenset[torch.fx.Node]) -> set[torch.fx.Node]:
    """Constant call nodes (weight dequantize, transposes) all of whose users are selected."""
    chosen: set[torch.fx.Node] = set()
    changed = True
    while changed:
        changed = False
        for node in constant:
            if node.op != "call_function" or node in chosen:
                continue
            if node.users and all(u in selected or u in chosen for u in node.users):
                chosen.add(node)
                changed = True
    return chosen


@dataclass
class QuantizedGroup:
    """Float operator nodes connected without a quantize/dequantize between them."""

    nodes: list[torch.fx.Node]
    reason: str = ""  # why the group stays on the CPU ("" if delegable)
    input_dequantize: list[torch.fx.Node] = field(default_factory=list)
    output_quantize: list[torch.fx.Node] = field(default_factory=list)


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[object, object] = {}

    def find(self, item: object) -> object:
        self.parent.setdefault(item, item)
        while self.parent[item] is not item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, a: object, b: object) -> object:
        root_a, root_b = self.find(a), self.find(b)
        if root_a is not root_b:
            self.parent[root_b] = root_a
        return root_a


def _is_float_op(node: torch.fx.Node, constant: frozenset[torch.fx.Node]) -> bool:
    return (
        node.op == "call_function"
        and node not in constant
        and not is_quantize(node)
        and not is_dequantize(node)
        and not is_delegate_call(node)
        and operator_name(node) not in COMPILE_TIME_CHECKS
    )


def quantized_groups(graph: torch.fx.Graph, constant: frozenset[torch.fx.Node]) -> list[QuantizedGroup]:
    """Splits the float operator nodes into quantized groups (graph order)."""
    union = _UnionFind()
    float_ops = [n for n in graph.nodes if _is_float_op(n, constant)]
    # Integer and bool values computed from integers only (a mask from a lengths input) are
    # exact: they join no group to its readers (several groups may read one mask). Those
    # computed from float values (a softmax guard's tests) stay with them.
    from_floats: set[torch.fx.Node] = set()
    for node in float_ops:
        union.find(node)
        for source in node.all_input_nodes:
            if not _is_float_op(source, constant):
                continue
            if not is_exact(source) or source in from_floats:
                union.union(source, node)
                if is_exact(node):
                    from_floats.add(node)
    members: dict[object, list[torch.fx.Node]] = {}
    for node in float_ops:
        members.setdefault(union.find(node), []).append(node)
    return [_classify(QuantizedGroup(nodes), constant) for nodes in members.values()]


def _classify(group: QuantizedGroup, constant: frozenset[torch.fx.Node]) -> QuantizedGroup:
    """Finds the group's boundary nodes, or the reason its boundary is not int8."""
    inside = set(group.nodes)
    for node in group.nodes:
        for source in node.all_input_nodes:
            if source in inside or source in constant:
                continue
            if is_index_operand(node, source):
                dtype = _value_dtype(source)
                if dtype != NPU_INDEX_DTYPE:
                    group.reason = (f"indices '{source.name}' of '{node.name}' are {dtype}; the NPU's GATHER reads "
                                    "int32 indices (give the model int32 indices)")
                    return group
                continue
            if is_exact(source) and (source.op != "placeholder" or _value_dtype(source) == NPU_INDEX_DTYPE):
                continue  # an int32 input or a computed mask: crosses as it is, never quantized
            if not is_dequantize(source):
                group.reason = (
                    f"input '{source.name}' of '{node.name}' is not quantized "
                    f"(it comes from {_describe(source)}, not a dequantize node)"
                )
                return group
            dtype = quantize_dtype(source)
            if dtype not in NPU_DTYPES:
                group.reason = f"input '{source.name}' of '{node.name}' is {dtype}; the NPU takes int8/int16"
                return group
            group.input_dequantize.append(source)
        for user in node.users:
            if user in inside or is_exact(node):
                continue
            if not is_quantize(user):
                group.reason = (
                    f"output of '{node.name}' is used unquantized by {_describe(user)}"
                )
                return group
            if quantize_dtype(user) not in NPU_DTYPES:
                group.reason = f"output of '{node.name}' is quantized to {quantize_dtype(user)}; the NPU needs int8/int16"
                return group
            group.output_quantize.append(user)
    return group


def is_exact(node: torch.fx.Node) -> bool:
    """True if ``node`` holds int32 or bool values (side inputs and masks, never quantized)."""
    return _value_dtype(node) in EXACT_DTYPES


def _value_dtype(node: torch.fx.Node) -> Optional[torch.dtype]:
    value = node.meta.get("val")
    return value.dtype if isinstance(value, torch.Tensor) else None


def _describe(node: torch.fx.Node) -> str:
    if node.op == "placeholder":
        # Integer inputs are side inputs (lengths, masks, indices), never quantized activations:
        # name their type so the report does not call them float.
        dtype = _value_dtype(node)
        kind = "float" if dtype is None or dtype.is_floating_point else str(dtype).removeprefix("torch.")
        return f"the {kind} input '{node.name}'"
    if node.op == "output":
        return "the program's output"
    return f"'{node.name}' ({operator_name(node)})"


@dataclass
class Partition:
    """Nodes that become one delegate, in graph order."""

    name: str
    nodes: list[torch.fx.Node]


def _attached(node: torch.fx.Node, selected: set[torch.fx.Node], constant: frozenset[torch.fx.Node]) -> bool:
    """Input dequantize and weight nodes travel with their only consumer."""
    return (
        node in selected
        and (is_dequantize(node) or node in constant)
        and len(node.users) == 1
        and next(iter(node.users)) in selected
    )


def _unit_sources(node: torch.fx.Node, attached: set[torch.fx.Node]) -> tuple[list[torch.fx.Node], list[torch.fx.Node]]:
    """(attached nodes that feed ``node``, the outside nodes that feed the unit)."""
    members, sources, stack = [], [], list(node.all_input_nodes)
    seen: set[torch.fx.Node] = set()
    while stack:
        source = stack.pop()
        if source in seen:
            continue
        seen.add(source)
        if source in attached:
            members.append(source)
            stack.extend(source.all_input_nodes)
        else:
            sources.append(source)
    return members, sources


def grow_partitions(
    graph: torch.fx.Graph,
    selected: set[torch.fx.Node],
    name: Callable[[int], str],
    constant: frozenset[torch.fx.Node] = frozenset(),
    together: Optional[Mapping[torch.fx.Node, object]] = None,
) -> list[Partition]:
    """Groups ``selected`` into connected partitions such that fusing each into one
    node keeps the graph acyclic.

    Walks the graph in topological order. An input dequantize or weight node moves
    with its only consumer, and the nodes ``together`` maps to one key (a quantized
    group with its output quantize nodes: float values flow between them) move as one;
    such a *unit* is placed when the walk has seen everything it reads
    (:func:`units_in_order`). ``upstream[n]`` holds the partitions with a path to
    ``n``; ``blocked[n]`` those with a path to ``n`` that leaves the partition on the
    way. A unit may join a producer's partition unless that partition is blocked for
    it; two partitions merge only if neither reaches the other through an outside node.
    ``together`` must not hold a unit that reads its own result through an outside
    node (see :func:`units_in_order`).
    """
    union = _UnionFind()
    attached = {n for n in selected if _attached(n, selected, constant)}
    part_of: dict[torch.fx.Node, object] = {}
    upstream: dict[torch.fx.Node, set[object]] = {}
    blocked: dict[torch.fx.Node, set[object]] = {}
    members: dict[object, list[torch.fx.Node]] = {}
    next_id = 0

    def resolve(ids: set[object]) -> set[object]:
        return {union.find(i) for i in ids}

    steps, cyclic = units_in_order(graph, together or {})
    if cyclic:
        raise ValueError(f"units that read their own results: {cyclic}")
    for step in steps:
        step = [n for n in step if n not in attached]
        if not step:
            continue
        inside = set(step)
        unit: list[torch.fx.Node] = []
        sources: list[torch.fx.Node] = []
        for node in step:
            found, outside = _unit_sources(node, attached) if node in selected else ([], node.all_input_nodes)
            unit += found
            sources += [s for s in outside if s not in inside and s not in sources]
        up: set[object] = set()
        block: set[object] = set()
        for source in sources:
            source_part = union.find(part_of[source]) if source in part_of else None
            source_up = resolve(upstream.get(source, set()))
            block |= resolve(blocked.get(source, set())) | (source_up - {source_part})
            up |= source_up | ({source_part} if source_part is not None else set())
        for node in step:
            upstream[node], blocked[node] = up, block
        if step[0] not in selected:
            continue
        candidates = []
        for source in sources:
            if source in part_of:
                part = union.find(part_of[source])
                if part not in block and part not in candidates:
                    candidates.append(part)
        chosen: Optional[object] = None
        for part in candidates:
            if chosen is None:
                chosen = part
            elif _can_merge(chosen, part, members, blocked, union):
                merged_members = members.pop(chosen) + members.pop(part)
                chosen = union.union(chosen, part)
                members[chosen] = merged_members
        if chosen is None:
            chosen = next_id
            next_id += 1
            union.find(chosen)
            members[chosen] = []
        for member in (*unit, *step):
            part_of[member] = chosen
            members[chosen].append(member)
    order = {node: index for index, node in enumerate(graph.nodes)}
    groups = sorted(members.values(), key=lambda nodes: min(order[n] for n in nodes))
    return [Partition(name(i), sorted(nodes, key=order.__getitem__)) for i, nodes in enumerate(groups)]


def units_in_order(graph: torch.fx.Graph, together: Mapping[torch.fx.Node, object]
                   ) -> tuple[list[list[torch.fx.Node]], list[object]]:
    """The graph's nodes in a topological order of the graph whose ``together`` units are
    contracted into one node each: a list of steps (a unit's nodes, or one node), kept as
    close to graph order as possible; and the keys of the units left out because they
    read their own result through a node outside them (no order places them whole)."""
    nodes = list(graph.nodes)
    position = {node: index for index, node in enumerate(nodes)}
    key_of = {node: together.get(node, node) for node in nodes}
    step_nodes: dict[object, list[torch.fx.Node]] = {}
    for node in nodes:
        step_nodes.setdefault(key_of[node], []).append(node)
    waiting = {key: 0 for key in step_nodes}
    readers: dict[object, set[object]] = {key: set() for key in step_nodes}
    for key, members in step_nodes.items():
        for node in members:
            for source in node.all_input_nodes:
                source_key = key_of[source]
                if source_key != key and key not in readers[source_key]:
                    readers[source_key].add(key)
                    waiting[key] += 1
    ready = [(position[members[0]], id(key), key) for key, members in step_nodes.items() if not waiting[key]]
    heapq.heapify(ready)
    order: list[list[torch.fx.Node]] = []
    while ready:
        _, _, key = heapq.heappop(ready)
        order.append(step_nodes[key])
        for reader in readers[key]:
            waiting[reader] -= 1
            if not waiting[reader]:
                heapq.heappush(ready, (position[step_nodes[reader][0]], id(reader), reader))
    placed = {key_of[members[0]] for members in order}
    units = set(together.values())
    return order, [key for key in step_nodes if key in units and key not in placed
                   and _reaches(key, key, readers, placed)]


def _reaches(start: object, goal: object, readers: Mapping[object, set[object]], placed: set[object]) -> bool:
    """True if a path of ``readers`` leads from ``start`` to ``goal`` outside ``placed``."""
    stack, seen = list(readers[start]), set()
    while stack:
        key = stack.pop()
        if key == goal:
            return True
        if key in seen or key in placed:
            continue
        seen.add(key)
        stack.extend(readers[key])
    return False


def _can_merge(a: object, b: object, members: dict, blocked: dict, union: _UnionFind) -> bool:
    """True if neither partition reaches the other through a node outside both."""
    for first, second in ((a, b), (b, a)):
        for node in members[second]:
            if first in {union.find(i) for i in blocked.get(node, set())}:
                return False
    return True


def cut_in_two(partition: Partition, constant: frozenset[torch.fx.Node]) -> Optional[tuple[list[torch.fx.Node],
                                                                                                list[torch.fx.Node]]]:
    """``partition``'s nodes as two partitions, cut as near the middle as possible where only
    quantized (int8/int16) tensors cross from the first to the second, or None if no such
    cut leaves an operator on each side. Dequantize and constant nodes (weights) go with
    their user, so a tensor crossing the cut is always a quantize node's int8 output. The
    first part never reads the second (graph order), so no cycle forms."""
    inside = set(partition.nodes)
    movable = {n for n in partition.nodes if n in constant or is_dequantize(n)}
    compute = [n for n in partition.nodes if n not in movable]
    position = {node: index for index, node in enumerate(compute)}
    # A cut after index i is clean if no node up to i, other than a quantize node, has a user past i.
    last_user = [max((_use_position(u, position, inside) for u in n.users), default=i)
                 for i, n in enumerate(compute)]
    clean, reach = [], -1
    for index, node in enumerate(compute[:-1]):
        if not is_quantize(node):
            reach = max(reach, last_user[index])
        if reach <= index and _computes(compute[:index + 1]) and _computes(compute[index + 1:]):
            clean.append(index)
    if not clean:
        return None
    middle = len(compute) / 2
    cut = min(clean, key=lambda index: abs(index + 1 - middle))
    first = set(compute[:cut + 1])
    for node in reversed(partition.nodes):  # users come later in graph order
        if node in movable and any(u in first for u in node.users if u in inside):
            first.add(node)
    return [n for n in partition.nodes if n in first], [n for n in partition.nodes if n not in first]


def _use_position(node: torch.fx.Node, position: dict[torch.fx.Node, int], inside: set[torch.fx.Node]) -> int:
    """The last compute node of the partition that uses ``node``'s value, reached through
    dequantize/constant nodes (they move with their users); -1 outside the partition."""
    if node not in inside:
        return -1
    if node in position:
        return position[node]
    return max((_use_position(u, position, inside) for u in node.users), default=-1)


def _computes(nodes: list[torch.fx.Node]) -> bool:
    return any(is_operator_node(n) and not is_quantize(n) and not is_dequantize(n) for n in nodes)
