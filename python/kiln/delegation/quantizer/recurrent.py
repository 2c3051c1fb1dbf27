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

Each piece is addressable below the layer's module name (scopes.py; module-scoped configs
take these names as they take module names): ``rnn.l0.input_projection`` (layer 0's input
projection of every step) and ``rnn.l0.steps.T`` (the cell at time step T), so that a
quantizer can give, say, the last steps of a sequence 16-bit activations and the rest int8.
A slice of one step of the output sequence (``sequence[:, -1]``) reads that step's output.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch.fx import Graph, GraphModule, Node

from kiln import KilnError
from kiln.delegation.quantizer.emit import Emitter
from kiln.delegation.quantizer.scopes import (RECURRENT_PART, SUBSCOPE_KEY, innermost_module, input_projection_scope,
                                              step_scope)

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


class RecurrentScopeError(KilnError, ValueError):
    """A name for a part of a recurrent layer (``rnn.l0.steps.T``) that the unrolled layer
    does not have: a step past the sequence, a layer index past ``num_layers``."""


def unrolled_size(node: Node) -> tuple[int, int] | None:
    """(stacked layers, time steps) of an ``aten.gru.input``/``aten.lstm.input`` node that
    :func:`unroll_recurrent_layers` unrolls, None for one it leaves whole."""
    layer = _layer_of(node)
    if layer is None:
        return None
    return layer.num_layers, _shape(layer.input)[1 if layer.batch_first else 0]


def check_subscope_names(graph: Graph, names: Iterable[str]) -> None:
    """Each of ``names`` shaped like a part of an unrolled recurrent layer's (``rnn.l0.steps.T``)
    names one: a config for a step the sequence does not have would configure nothing."""
    present = {node.meta[SUBSCOPE_KEY] for node in graph.nodes if SUBSCOPE_KEY in node.meta}
    layers: dict[str, list[str]] = {}
    for scope in present:
        layers.setdefault(RECURRENT_PART.match(scope).group("layer"), []).append(scope)
    for name in names:
        match = RECURRENT_PART.match(name)
        if match is None or name in present or match.group("layer") not in layers:
            continue
        scopes = layers[match.group("layer")]
        indices = sorted({int(RECURRENT_PART.match(s).group("index")) for s in scopes})
        steps = sorted({int(RECURRENT_PART.match(s).group("step")) for s in scopes if ".steps." in s})
        raise RecurrentScopeError(
            f"{name!r} names no part of the recurrent layer {match.group('layer')!r}: it has layers "
            f"l{indices[0]}..l{indices[-1]}, each with an input_projection and steps.0..steps.{steps[-1]}")


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
    scope = (innermost_module(node) or (None,))[0]
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
        emit.subscope = input_projection_scope(scope, index) if scope else None
        gates_x = emit(aten.linear.default, sequence, w_ih, b_ih)  # every step's input projection at once
        outputs = []
        for step in range(steps):
            emit.subscope = step_scope(scope, index, step) if scope else None
            x_gates = emit(aten.select.int, gates_x, time_dim, step)
            if lstm:
                states = list(_lstm_step(emit, x_gates, states[0], states[1], w_hh, b_hh, size))
            else:
                states = [_gru_step(emit, x_gates, states[0], w_hh, b_hh, size)]
            outputs.append(states[0])
        emit.subscope = None
        sequence = emit(aten.stack.default, outputs, time_dim)
        for kind, state in enumerate(states):
            finals[kind].append(state)
    results = [sequence] + [emit(aten.stack.default, final, 0) for final in finals[: 2 if lstm else 1]]
    for user in list(node.users):
        if user.op == "call_function" and user.target is operator.getitem:
            user.replace_all_uses_with(results[int(user.args[1])])
            graph.erase_node(user)
    graph.erase_node(node)
    _read_steps_directly(graph, sequence, outputs, time_dim)
    return True


def _read_steps_directly(graph: Graph, sequence: Node, outputs: list[Node], time_dim: int) -> None:
    """``sequence[:, T]`` (a classifier on the last step's state) reads step T's output itself,
    not a slice of the stacked sequence: the stack of every step is then not computed when
    nothing else reads it (a concatenation pass of all steps on the NPU), and the step's
    state keeps its own quantization (16 bits when the last steps are 16-bit) where the
    stack would requantize it to the first step's."""
    rank = len(_shape(sequence))
    for user in list(sequence.users):
        if user.op != "call_function" or user.target is not aten.select.int or user.args[0] is not sequence:
            continue
        dim, index = user.args[1], user.args[2]
        if not isinstance(dim, int) or not isinstance(index, int) or dim % rank != time_dim:
            continue
        if not -len(outputs) <= index < len(outputs):
            continue
        user.replace_all_uses_with(outputs[index])
        graph.erase_node(user)


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
