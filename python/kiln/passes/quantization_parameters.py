"""Quantization parameters a program can run with: every scale positive and finite.

Calibration measures each quantized tensor's range; a tensor that holds -inf or inf (an
additive attention mask, ``masked_fill(mask, float("-inf"))``, a ``log`` of zero) gets an
infinite scale, one that holds NaN a NaN scale, one that is never anything but 0 with an
observer without a floor a zero scale. The quantize kernels refuse such a scale when the
program runs; here it is refused when the model is quantized (:func:`check_calibrated_ranges`,
on the observers, before torchao's convert trips over them) and when a program is made
(:func:`check_quantization_scales`), naming the node whose value was measured.
"""

from __future__ import annotations

import math
import os
import torch
from torch.export import ExportedProgram

from kiln import ExportError

_PER_TENSOR = {"quantize_per_tensor", "dequantize_per_tensor"}


class QuantizationScaleError(ExportError):
    """A quantized tensor's scale is infinite, zero, negative or NaN.

    Attributes:
        node: the node whose value is quantized with that scale (as the graph names it).
        scale: the scale.
    """

    def __init__(self, message: str, *, node: str, scale: float) -> None:
        super().__init__(message)
        self.node = node
        self.scale = scale


def _source_line(node: torch.fx.Node) -> str:
    """Where the model's code made ``node``: the last frame of its stack trace outside torch
    (torch's own functions, such as MultiheadAttention's, are not what the user wrote)."""
    trace = (node.meta.get("stack_trace") or "").strip().splitlines()
    frames = [line.strip() for line in trace if line.strip().startswith("File ")]
    own = [frame for frame in frames if f"{os.sep}torch{os.sep}" not in frame]
    return f", made at {(own or frames)[-1]}" if frames else ""


def _problem(scale: float) -> str:
    if math.isnan(scale):
        return "a NaN scale (its calibrated range holds NaN)"
    if math.isinf(scale):
        return "an infinite scale (its calibrated range holds -inf or inf: a mask that hides values with -inf?)"
    return f"scale {scale!r} (its calibrated range is empty: no observer floor kept it above 0)"


def check_calibrated_ranges(prepared: torch.fx.GraphModule) -> None:
    """Raises :class:`QuantizationScaleError` for the first observer of ``prepared`` (a
    calibrated PT2E module) whose measured range is not finite."""
    for node in prepared.graph.nodes:
        if node.op != "call_module" or not node.args or not isinstance(node.args[0], torch.fx.Node):
            continue
        observer = prepared.get_submodule(str(node.target))
        low, high = getattr(observer, "min_val", None), getattr(observer, "max_val", None)
        if not isinstance(low, torch.Tensor) or not isinstance(high, torch.Tensor) or low.numel() == 0:
            continue
        if bool(torch.isfinite(low).all()) and bool(torch.isfinite(high).all()):
            continue
        measured = node.args[0]
        nan = bool(torch.isnan(low).any() or torch.isnan(high).any())
        scale = math.nan if nan else math.inf
        raise QuantizationScaleError(
            f"the calibration measured node '{measured.name}' ({_target_name(measured)}{_source_line(measured)}) "
            f"in [{float(low.min())}, {float(high.max())}], which gives {_problem(scale)}; the quantized program "
            "could not run. Keep that tensor in float (a quantizer config of None for its module) or give it "
            "finite values.", node=measured.name, scale=scale)


def check_quantization_scales(graph: torch.fx.Graph, what: str = "the program") -> None:
    """Raises :class:`QuantizationScaleError` for the first per-tensor quantize/dequantize of
    ``graph`` whose scale is not positive and finite."""
    for node in graph.nodes:
        if node.op != "call_function" or getattr(node.target, "namespace", "") != "quantized_decomposed":
            continue
        if node.target._schema.name.split("::")[-1] not in _PER_TENSOR or len(node.args) < 2:
            continue
        scale = node.args[1]
        if not isinstance(scale, (int, float)) or (math.isfinite(scale) and scale > 0):
            continue
        measured = _measured_node(node)
        raise QuantizationScaleError(
            f"{what} quantizes node '{measured.name}' ({_target_name(measured)}{_source_line(measured)}) with "
            f"{_problem(float(scale))}; the quantized program could not run. Keep that tensor in float (a "
            "quantizer config of None for its module) or give it finite values.",
            node=measured.name, scale=float(scale))


def _measured_node(node: torch.fx.Node) -> torch.fx.Node:
    """The node whose value ``node`` quantizes (a quantize comes before its dequantize, so a
    dequantize met first reads an input or a constant)."""
    source = node.args[0]
    return source if isinstance(source, torch.fx.Node) else node


def _target_name(node: torch.fx.Node) -> str:
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return target.name()
    return node.op if node.op != "call_function" else getattr(target, "__name__", str(target))


def check_program_scales(program: ExportedProgram, what: str = "the program") -> None:
    """:func:`check_quantization_scales` on ``program``'s graph."""
    check_quantization_scales(program.graph_module.graph, what)
