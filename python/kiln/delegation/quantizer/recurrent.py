"""GRU and LSTM layers unrolled over time into the cell's own operators, before annotation.

``torch.export`` keeps ``nn.GRU``/``nn.LSTM`` as one ``aten.gru.input``/``aten.lstm.input``
node that no quantizer can look into. Written out per time step as PyTorch defines the
cells - one ``linear`` for the input projection of all steps, per step a ``linear`` of the
hidden state, ``split_with_sizes`` into gates, ``sigmoid``/``tanh``, ``mul``/``add``/``sub`` -
every piece is an operator the Ethos-U quantizer annotates and the NPU runs (fully
connected layers, lookup tables, element-wise arithmetic). The arithmetic is the layer's
own, so the float graph computes what the layer computes.

Layers that are bidirectional, take a packed sequence or run in training mode are left
as they are (they stay in float on the CPU).
"""

from __future__ import annotations

import logging
import operator
from dataclasses import dataclass

import torch
from torch.fx import Graph, GraphModule, Node

from kiln.delegation.quantizer.emit import Emitter

logger = logging.getLogger(__name__)

aten = torch.ops.aten


@dataclass(frozen=True)
class _Layer:
    """The arguments of aten.gru.input / aten.lstm.input that the unrolling needs."""

    input: Node
    hidden: list[Node]  # [h0] (GRU) or [h0, c0] (LSTM), each [num_layers, batch, hidden]
    params: list[Node]
    has_biases: bool
    num_layers: int
    batch_first: bool


def _layer_of(node: Node) -> _Layer | None:
    (source, hidden, params, has_biases, num_layers, _dropout, train, bidirectional, batch_first) = node.args
    if train or bidirectional:
        return None
    hidden = list(hidden) if isinstance(hidden, (list, tuple)) else [hidden]
    return _Layer(source, hidden, list(params), bool(has_biases), int(num_layers), bool(batch_first))


def _shape(node: Node) -> tuple[int, ...]:
    return tuple(int(d) for d in node.meta["val"].shape)


def _gru_step(emit: Emitter, gates_x: Node, h: Node, w_hh: Node, b_hh: Node | None, size: int) -> Node:
    gates_h = emit(aten.linear.default, h, w_hh, b_hh)
    x_r, x_z, x_n = emit.split(gates_x, [size] * 3)
    h_r, h_z, h_n = emit.split(gates_h, [size] * 3)
    r = emit(aten.sigmoid.default, emit(aten.add.Tensor, x_r, h_r))
    z = emit(aten.sigmoid.default, emit(aten.add.Tensor, x_z, h_z))
    n = emit(aten.tanh.default, emit(aten.add.Tensor, x_n, emit(aten.mul.Tensor, r, h_n)))
    # (1 - z) n + z h == n + z (h - n)
    return emit(aten.add.Tensor, n, emit(aten.mul.Tensor, z, emit(aten.sub.Tensor, h, n)))


def _lstm_step(emit: Emitter, gates_x: Node, h: Node, c: Node, w_hh: Node, b_hh: Node | None,
               size: int) -> tuple[Node, Node]:
    gates = emit(aten.add.Tensor, gates_x, emit(aten.linear.default, h, w_hh, b_hh))
    i, f, g, o = emit.split(gates, [size] * 4)
    i, f, o = (emit(aten.sigmoid.default, gate) for gate in (i, f, o))
    g = emit(aten.tanh.default, g)
    c = emit(aten.add.Tensor, emit(aten.mul.Tensor, f, c), emit(aten.mul.Tensor, i, g))
    return emit(aten.mul.Tensor, o, emit(aten.tanh.default, c)), c


def _unroll(graph: Graph, node: Node, lstm: bool) -> bool:
    layer = _layer_of(node)
    if layer is None:
        return False
    emit = Emitter(graph, node)
    per_layer = 4 if layer.has_biases else 2
    time_dim = 1 if layer.batch_first else 0
    sequence = layer.input
    steps = _shape(sequence)[time_dim]
    finals: list[list[Node]] = [[], []]
    for index in range(layer.num_layers):
        weights = layer.params[index * per_layer:(index + 1) * per_layer]
        w_ih, w_hh = weights[0], weights[1]
        b_ih, b_hh = (weights[2], weights[3]) if layer.has_biases else (None, None)
        size = _shape(w_hh)[1]
        states = [emit(aten.select.int, state, 0, index) for state in layer.hidden]
        gates_x = emit(aten.linear.default, sequence, w_ih, b_ih)  # every step's input projection at once
        outputs = []
        for step in range(steps):
            x_gates = emit(aten.select.int, gates_x, time_dim, step)
            if lstm:
                states = list(_lstm_step(emit, x_gates, states[0], states[1], w_hh, b_hh, size))
            else:
                states = [_gru_step(emit, x_gates, states[0], w_hh, b_hh, size)]
            outputs.append(states[0])
        sequence = emit(aten.stack.default, outputs, time_dim)
        for kind, state in enumerate(states):
            finals[kind].append(state)
    results = [sequence] + [emit(aten.stack.default, final, 0) for final in finals[: 2 if lstm else 1]]
    for user in list(node.users):
        if user.op == "call_function" and user.target is operator.getitem:
            user.replace_all_uses_with(results[int(user.args[1])])
            graph.erase_node(user)
    graph.erase_node(node)
    return True


def unroll_recurrent_layers(model: GraphModule) -> GraphModule:
    """Replaces every unidirectional, inference-mode GRU/LSTM node by its unrolled cells."""
    graph = model.graph
    unrolled = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in (aten.gru.input, aten.lstm.input):
            continue
        if _unroll(graph, node, lstm=node.target == aten.lstm.input):
            unrolled += 1
        else:
            logger.info("%s: bidirectional or training-mode recurrent layer left as one operator", node.name)
    if unrolled:
        graph.eliminate_dead_code()
        model.recompile()
        logger.info("unrolled %d recurrent layer(s) over time", unrolled)
    return model
