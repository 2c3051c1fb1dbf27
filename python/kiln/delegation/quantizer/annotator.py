"""Writes PT2E quantization annotations on an exported graph, one node group at a time.

Rules (why): every quantized op reads int8 tensors whose qparams come from the
producer when the producer is quantized (``SharedQuantizationSpec(producer)``), so
one tensor never gets two observers. Where TOSA has no rescale (reshape, pooling,
concat, clamp) the output shares the input's qparams; where an activation can be
folded into the producer's output rescale (conv + relu) only the activation's
output is quantized. An operator without a rule of its own is quantized at its own
inputs and output, so that a backend that cannot run it leaves only it on the CPU; a
pointwise function of one tensor is left to fuse into one lookup table, and a mask
that hides softmax scores (-inf) is never quantized. Nodes whose config is None are
left float. With 16-bit (a16w8) configs a tensor is shared only between operators of one
precision, except that a 16-bit convolution or linear layer reads an int8 tensor as it is;
elsewhere a reader of the other precision gets its own observer, and PT2E requantizes on
that edge.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch.fx import Node
from torchao.quantization.pt2e.quantizer import (
    QuantizationAnnotation,
    QuantizationSpecBase,
    SharedQuantizationSpec,
)

from kiln.delegation.quantizer import patterns
from kiln.delegation.quantizer.attention import MASKS_SOFTMAX
from kiln.delegation.quantizer.config import QuantizationConfig, fixed_output_spec, is_int16

ANNOTATION_KEY = "quantization_annotation"

aten = torch.ops.aten

ConfigLookup = Callable[[Node], "QuantizationConfig | None"]


def is_annotated(node: Node) -> bool:
    annotation = node.meta.get(ANNOTATION_KEY)
    return annotation is not None and annotation._annotated


def output_is_quantized(node: Node) -> bool:
    annotation = node.meta.get(ANNOTATION_KEY)
    return annotation is not None and annotation.output_qspec is not None


def output_dtype(node: Node) -> torch.dtype | None:
    """The integer dtype ``node``'s output is quantized to (following shared specs)."""
    seen: set[int] = set()
    spec = node.meta[ANNOTATION_KEY].output_qspec if output_is_quantized(node) else None
    while isinstance(spec, SharedQuantizationSpec) and id(spec) not in seen:
        seen.add(id(spec))
        edge = spec.edge_or_node
        if isinstance(edge, Node):
            annotation = edge.meta.get(ANNOTATION_KEY)
            spec = annotation.output_qspec if annotation is not None else None
        else:
            source, user = edge
            annotation = user.meta.get(ANNOTATION_KEY)
            spec = annotation.input_qspec_map.get(source) if annotation is not None else None
    return getattr(spec, "dtype", None)


def _is_float_tensor(node: object) -> bool:
    if not isinstance(node, Node):
        return False
    value = node.meta.get("val")
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _annotate(node: Node, inputs: dict[Node, QuantizationSpecBase], output: QuantizationSpecBase | None) -> None:
    node.meta[ANNOTATION_KEY] = QuantizationAnnotation(
        input_qspec_map=inputs, output_qspec=output, _annotated=True
    )


def _mark_fused(node: Node) -> None:
    """Part of a group annotated elsewhere: no observer of its own."""
    node.meta[ANNOTATION_KEY] = QuantizationAnnotation(_annotated=True)


class GraphAnnotator:
    """Annotates every node of ``graph`` in topological order under ``config_for``."""

    def __init__(self, config_for: ConfigLookup, *, shared_averages: bool = False) -> None:
        self._config_for = config_for
        # Kernels that average at the input's qparams (CMSIS-NN's, XNNPACK's) need the
        # output to share them; the Ethos-U lowering rescales (patterns.AVERAGE).
        self._shared_averages = shared_averages

    def input_spec(self, arg: Node, config: QuantizationConfig, *, reads_int8: bool = False) -> QuantizationSpecBase:
        """The producer's qparams when it is quantized to the same dtype, or to int8 for a
        16-bit operator that ``reads_int8`` (a convolution or linear layer: requantizing its
        input to int16 would add an NPU pass and no precision), else a fresh activation
        observer (PT2E requantizes on that edge). Elementwise operators always read one
        dtype: Vela 5.2 miscompiles a MUL of an int8 and an int16 operand on the Ethos-U55
        when an operand is a channel slice (a recurrent cell's split gates): it rescales the
        whole unsliced tensor to int32 in NHCWB16 scratch that overlaps the tensor it still
        reads, and reads the slice at channel 0 rather than its offset (docs/quantize.md;
        the U85 stream is right, and int8 x int8 or int16 x int16 MULs fold the rescales)."""
        if output_is_quantized(arg):
            produced = output_dtype(arg)
            wanted = config.activation.dtype
            if produced is None or produced == wanted or \
                    (reads_int8 and produced == torch.int8 and wanted == torch.int16):
                return SharedQuantizationSpec(arg)
        return config.activation

    def annotate(self, graph: torch.fx.Graph) -> None:
        for node in graph.nodes:
            if node.op != "call_function" or is_annotated(node):
                continue
            config = self._config_for(node)
            if config is None:
                continue
            target = node.target
            if MASKS_SOFTMAX in node.meta:
                self._annotate_softmax_mask(node, config)
            elif target in patterns.WEIGHTED:
                self._annotate_weighted(node, config)
            elif target in patterns.ARITHMETIC:
                self._annotate_arithmetic(node, config)
            elif target in patterns.TABLE or target in patterns.SOFTMAX or target in patterns.NORMALIZATION \
                    or target in patterns.SUM or (target in patterns.AVERAGE and not self._shared_averages):
                self._annotate_own_output(node, config)
            elif target in patterns.CONCAT:
                self._annotate_concat(node, config)
            elif target in patterns.GATHER:
                self._annotate_gather(node, config)
            elif target in patterns.SHARED or target in patterns.AVERAGE:
                self._annotate_shared(node, config)
            elif target not in patterns.LEFT_FLOAT:
                self._annotate_standalone(node, config)

    # ------------------------------------------------------------------ groups
    def _output_chain(self, node: Node, config: QuantizationConfig) -> list[Node]:
        """``node`` plus a following batch norm (QAT graphs) and activation it can absorb."""
        chain = [node]
        if node.target not in patterns.FUSES_ACTIVATION:
            return chain
        allowed = [patterns.FUSABLE_ACTIVATIONS]
        if node.target in patterns.WEIGHTED:
            allowed.insert(0, patterns.BATCH_NORM)
        for group in allowed:
            last = chain[-1]
            if len(last.users) != 1:
                break
            user = next(iter(last.users))
            if user.target in group and user.args[0] is last and not is_annotated(user) \
                    and self._config_for(user) is config:
                chain.append(user)
        return chain

    def _quantize_output(self, chain: list[Node], inputs: dict[Node, QuantizationSpecBase],
                         output: QuantizationSpecBase) -> None:
        head, tail = chain[0], chain[-1]
        if head is tail:
            _annotate(head, inputs, output)
            return
        _annotate(head, inputs, None)
        for middle in chain[1:-1]:
            _mark_fused(middle)
        _annotate(tail, {}, output)

    def _annotate_weighted(self, node: Node, config: QuantizationConfig) -> None:
        activation, weight = node.args[0], node.args[1]
        if not (_is_float_tensor(activation) and isinstance(weight, Node)):
            return
        inputs: dict[Node, QuantizationSpecBase] = {
            activation: self.input_spec(activation, config, reads_int8=True),
            weight: config.weight_spec(node),
        }
        bias = node.args[2] if len(node.args) > 2 else None
        if isinstance(bias, Node):
            inputs[bias] = config.bias_spec(node)
        self._quantize_output(self._output_chain(node, config), inputs, config.activation)

    def _annotate_arithmetic(self, node: Node, config: QuantizationConfig) -> None:
        operands = [a for a in node.args[:2] if _is_float_tensor(a)]
        if not operands or not _is_float_tensor(node):
            return
        inputs = {a: self.input_spec(a, config) for a in operands}
        self._quantize_output(self._output_chain(node, config), inputs, config.activation)

    def _annotate_own_output(self, node: Node, config: QuantizationConfig) -> None:
        source = node.args[0]
        if not (_is_float_tensor(source) and _is_float_tensor(node)):
            return
        known = patterns.FIXED_RANGE.get(node.target)
        output = fixed_output_spec(*known, dtype=config.activation.dtype) if known else config.activation
        _annotate(node, {source: self.input_spec(source, config)}, output)

    def _annotate_shared(self, node: Node, config: QuantizationConfig) -> None:
        source = node.args[0]
        if not (_is_float_tensor(source) and _is_float_tensor(node)):
            return
        spec = self.input_spec(source, config)
        _annotate(node, {source: spec}, SharedQuantizationSpec((source, node)))

    def _annotate_gather(self, node: Node, config: QuantizationConfig) -> None:
        table = node.args[0]
        if not (_is_float_tensor(table) and _is_float_tensor(node)):
            return
        _annotate(node, {table: self.input_spec(table, config)}, SharedQuantizationSpec((table, node)))

    def _annotate_softmax_mask(self, node: Node, config: QuantizationConfig) -> None:
        """scores + mask (or scores.masked_fill(hidden, -inf)) -> softmax: the scores are
        quantized, the mask and the masked scores are not (-inf has no integer code), and
        the softmax's output has its fixed range."""
        scores = node.args[node.meta[MASKS_SOFTMAX]]
        softmax = next(iter(node.users))
        if not (_is_float_tensor(scores) and _is_float_tensor(softmax)) or is_annotated(softmax):
            return
        _annotate(node, {scores: self.input_spec(scores, config)}, None)
        _annotate(softmax, {}, fixed_output_spec(*patterns.FIXED_RANGE[aten._softmax.default]))

    def _annotate_standalone(self, node: Node, config: QuantizationConfig) -> None:
        """An operator no rule above knows: quantized at its own inputs and output, so that
        a backend that cannot run it leaves it alone on the CPU and keeps its neighbours (a
        float edge to a neighbour would take the neighbour along). A pointwise function of
        one tensor is left to fuse with its neighbours into one lookup table."""
        if not isinstance(node.target, torch._ops.OpOverload) or not _is_float_tensor(node):
            return
        activations = list(dict.fromkeys(a for a in node.all_input_nodes
                                         if _is_float_tensor(a) and a.op != "get_attr"))
        if not activations:
            return
        if torch.Tag.pointwise in node.target.tags and len(activations) == 1:
            source = activations[0]
            next_to_int16 = (output_is_quantized(source) and output_dtype(source) == torch.int16) or \
                any(is_int16(self._config_for(user)) for user in node.users)
            if next_to_int16 and config.activation.dtype != torch.int16:
                # A lookup table reads and writes int8 codes: requantize a 16-bit producer's
                # output to int8 on the way in, and quantize the table's own output to int8
                # (a 16-bit consumer requantizes it) instead of letting the consumer's
                # 16-bit observer end the table's region.
                _annotate(node, {source: self.input_spec(source, config)}, config.activation)
            return
        _annotate(node, {a: self.input_spec(a, config) for a in activations}, config.activation)

    def _annotate_concat(self, node: Node, config: QuantizationConfig) -> None:
        tensors = node.args[0]
        if not isinstance(tensors, (list, tuple)) or not tensors \
                or not all(_is_float_tensor(t) for t in tensors):
            return
        first = tensors[0]
        shared = SharedQuantizationSpec((first, node))
        inputs: dict[Node, QuantizationSpecBase] = {first: self.input_spec(first, config)}
        for other in tensors[1:]:
            inputs.setdefault(other, shared)
        _annotate(node, inputs, shared)


def annotate_inputs(graph: torch.fx.Graph, config: QuantizationConfig) -> None:
    """Quantizes the model's float inputs right after their placeholders (before the ops)."""
    for node in graph.nodes:
        if node.op == "placeholder" and _is_float_tensor(node) and node.users:
            _annotate(node, {}, config.activation)


def annotate_outputs(graph: torch.fx.Graph, config: QuantizationConfig) -> None:
    """Quantizes the model's float outputs (after the ops, so quantized producers are shared)."""
    output = graph.output_node()
    results: list[Node] = []
    torch.fx.node.map_arg(output.args[0], results.append)
    inputs = {a: (SharedQuantizationSpec(a) if output_is_quantized(a) else config.activation)
              for a in results if _is_float_tensor(a)}
    if inputs:
        _annotate(output, inputs, None)
