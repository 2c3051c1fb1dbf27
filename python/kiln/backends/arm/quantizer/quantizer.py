"""``EthosUQuantizer``: a torchao PT2E ``Quantizer`` for what Vela and TOSA 1.0 INT accept.

    quantizer = EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"))   # global int8 config
    quantizer.set_module_type(torch.nn.LayerNorm, None)                # keep LayerNorms float
    quantizer.set_module_name("head", None)                            # and the head module
    program = kiln.quantize(model, inputs, quantizer, calibration_samples)

    EthosUQuantizer(spec, activations="int16")                         # a16w8 everywhere
    EthosUQuantizer(spec, int16_modules=["encoder.attn"])              # a16w8 in one submodule

Which config applies to a node: see :class:`kiln.delegation.quantizer.ModuleScopedQuantizer`;
after a 16-bit producer, operators without arithmetic follow its precision
(:meth:`EthosUQuantizer._config_following_producer`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

import torch
from torch.fx import GraphModule, Node

from kiln.backends.arm.quantizer.precision import KeptInt8, PrecisionChooser
from kiln.delegation.quantizer import patterns
from kiln.delegation.quantizer.annotator import GraphAnnotator, annotate_inputs, annotate_outputs
from kiln.delegation.quantizer.base import ModuleScopedQuantizer
from kiln.delegation.quantizer.config import (
    QuantizationConfig, get_a16w8_quantization_config, get_symmetric_quantization_config, is_int16,
)
from kiln.delegation.quantizer.infinities import leave_infinities_float
from kiln.delegation.quantizer.scopes import module_path
from kiln.delegation.report import PRECISION_NOTES_KEY

if TYPE_CHECKING:
    from kiln.backends.arm.compile_spec import EthosUCompileSpec


class EthosUQuantizer(ModuleScopedQuantizer):
    """Annotates a model for int8 (or a16w8) execution on the Ethos-U described by ``compile_spec``.

    The default global config is :func:`get_symmetric_quantization_config` (int8
    per-channel symmetric weights, int8 per-tensor affine activations, int32 bias).
    ``compile_spec`` may be None for target-independent use. Every Ethos-U (U55, U65,
    U85) takes the same schemes; the spec is kept so that later passes can ask
    which target the annotations were made for.
    """

    def __init__(self, compile_spec: EthosUCompileSpec | None = None, *,
                 is_qat: bool = False, activations: str = "int8",
                 int16_modules: Iterable[str] = ()) -> None:
        """``activations="int16"`` quantizes every activation to 16 bits (a16w8: int8
        weights); ``int16_modules`` names submodules (as in ``named_modules()``) whose
        activations are 16-bit while the rest keep ``activations``. Operators the
        Ethos-U cannot run in 16 bits keep int8 either way: :attr:`kept_int8` lists them
        after annotation, with the reason."""
        if activations not in ("int8", "int16"):
            raise ValueError(f"activations must be 'int8' or 'int16', got {activations!r}")
        super().__init__(get_a16w8_quantization_config(is_qat=is_qat) if activations == "int16"
                         else get_symmetric_quantization_config(is_qat=is_qat))
        self.compile_spec = compile_spec
        self._precision = PrecisionChooser()
        self._following: dict[Node, QuantizationConfig | None] = {}  # per annotate(): each node's config
        names = [int16_modules] if isinstance(int16_modules, str) else list(int16_modules)
        if names:
            a16w8 = get_a16w8_quantization_config(is_qat=is_qat)
            for name in names:
                self.set_module_name(name, a16w8)

    @property
    def kept_int8(self) -> list[KeptInt8]:
        """Operators a 16-bit config covered that keep int8 activations, each with why
        (filled by annotation)."""
        return self._precision.kept_int8

    def _config_following_producer(self, node: Node) -> QuantizationConfig | None:
        """:meth:`config_for`, except that after a 16-bit producer an operator without
        arithmetic (a view, a clamp: patterns.SHARED), or one written in the model's own
        forward (no submodule of its own: a functional relu, mean, add), takes a 16-bit
        operand's config: such an operator should neither split the layer's fused activation
        nor requantize to int8 for nothing."""
        if node in self._following:
            return self._following[node]
        self._following[node] = config = self._follow(node)
        return config

    def _follow(self, node: Node) -> QuantizationConfig | None:
        config = self.config_for(node)
        in_no_submodule = not any(module_path(path) for path, _ in (node.meta.get("nn_module_stack") or {}).values())
        if is_int16(config) or not (node.target in patterns.SHARED or in_no_submodule):
            return config
        # A view or clamp follows its input; an operator of the model's own forward follows
        # any 16-bit operand (a residual add after a 16-bit block: the stream it carries
        # stays 16-bit, its other operand is requantized).
        sources = node.args[:1] if node.target in patterns.SHARED else node.args
        for source in sources:
            if isinstance(source, Node) and source.op == "call_function":
                producer = self._config_following_producer(source)
                if is_int16(producer):
                    return producer
        return config

    def annotate(self, model: GraphModule) -> GraphModule:
        graph = model.graph
        if self.io_config is not None:
            annotate_inputs(graph, self.io_config)
        self._precision = PrecisionChooser()
        self._following = {}
        GraphAnnotator(lambda node: self._precision(node, self._config_following_producer(node)),
                       shared_averages=self.shared_averages).annotate(graph)
        if self.io_config is not None:
            annotate_outputs(graph, self.io_config)
        return leave_infinities_float(model)  # an infinity has no integer code

    def record_precision(self, program: torch.export.ExportedProgram) -> None:
        """Writes :attr:`kept_int8` into the quantized ``program`` for the partition report."""
        if self.kept_int8:
            program.graph_module.meta[PRECISION_NOTES_KEY] = [str(kept) for kept in self.kept_int8]

    def validate(self, model: GraphModule) -> None:
        """Nothing to reject: ops the Ethos-U cannot run are the partitioner's business."""
