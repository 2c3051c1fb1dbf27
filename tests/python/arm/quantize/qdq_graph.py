"""Helpers that read quantization parameters back out of a converted ExportedProgram."""

from __future__ import annotations

import torch
from torch.export import ExportedProgram
from torch.fx import Node

qd = torch.ops.quantized_decomposed
QUANTIZE = {qd.quantize_per_tensor.default}
DEQUANTIZE = {qd.dequantize_per_tensor.default}


def nodes(program: ExportedProgram, target: object) -> list[Node]:
    return [n for n in program.graph.nodes if n.op == "call_function" and n.target == target]


def constant(program: ExportedProgram, node: Node) -> torch.Tensor:
    """The tensor behind a lifted parameter / buffer / constant placeholder."""
    signature = program.graph_signature
    for mapping in (signature.inputs_to_parameters, signature.inputs_to_buffers,
                    signature.inputs_to_lifted_tensor_constants):
        if node.name in mapping:
            key = mapping[node.name]
            return program.state_dict[key] if key in program.state_dict else program.constants[key]
    raise KeyError(f"{node.name} is not a constant of the program")


def input_qparams(node: Node, index: int = 0) -> tuple[float, int]:
    """(scale, zero point) of the dequantize that feeds argument ``index`` of ``node``."""
    source = node.args[index]
    if isinstance(source, (list, tuple)):
        raise TypeError("use list_input_qparams for list arguments")
    assert isinstance(source, Node) and source.target in DEQUANTIZE, f"{node.name} arg {index} is float"
    return float(source.args[1]), int(source.args[2])


def list_input_qparams(node: Node) -> list[tuple[float, int]]:
    return [(float(s.args[1]), int(s.args[2])) for s in node.args[0]]


def output_qparams(node: Node) -> tuple[float, int]:
    """(scale, zero point) of the quantize that consumes ``node`` (through a getitem if any)."""
    users = list(node.users)
    if len(users) == 1 and users[0].target.__name__ == "getitem":  # type: ignore[union-attr]
        users = list(users[0].users)
    quantizes = [u for u in users if u.target in QUANTIZE]
    assert quantizes, f"{node.name} output is not quantized"
    return float(quantizes[0].args[1]), int(quantizes[0].args[2])


def output_is_quantized(node: Node) -> bool:
    users = list(node.users)
    if len(users) == 1 and getattr(users[0].target, "__name__", "") == "getitem":
        users = list(users[0].users)
    return any(u.target in QUANTIZE for u in users)
