"""``EthosUQuantizer``: a torchao PT2E ``Quantizer`` for what Vela and TOSA 1.0 INT accept.

    quantizer = EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"))   # global int8 config
    quantizer.set_module_type(torch.nn.LayerNorm, None)                # keep LayerNorms float
    quantizer.set_module_name("head", None)                            # and the head module
    program = kiln.quantize(model, inputs, quantizer, calibration_samples)

Which config applies to a node: the innermost module named with ``set_module_name``
that contains it, else the innermost module whose type was given to
``set_module_type``, else the global config. ``None`` anywhere means "leave float"
(the op then runs on the CPU in float). Module scopes come from the
``nn_module_stack`` metadata that ``torch.export`` records on every node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import Quantizer

from kiln.backends.arm.quantizer.attention import write_out_attention
from kiln.backends.arm.quantizer.annotator import GraphAnnotator, annotate_inputs, annotate_outputs
from kiln.backends.arm.quantizer import patterns
from kiln.backends.arm.quantizer.config import (
    QuantizationConfig, get_a16w8_quantization_config, get_symmetric_quantization_config, is_int16,
)
from kiln.backends.arm.quantizer.glu import write_out_glu
from kiln.backends.arm.quantizer.infinities import leave_infinities_float
from kiln.backends.arm.partitioner.report import PRECISION_NOTES_KEY
from kiln.backends.arm.quantizer.precision import KeptInt8, PrecisionChooser
from kiln.backends.arm.quantizer.recurrent import unroll_recurrent_layers

if TYPE_CHECKING:
    from kiln.backends.arm.compile_spec import EthosUCompileSpec

_UNSET = object()


def _module_path(path: str) -> str:
    """``nn_module_stack`` paths may carry dynamo's ``L['self'].`` prefix; drop it."""
    for prefix in ("L['self'].", "L__self__."):
        if path.startswith(prefix):
            path = path[len(prefix):]
    return path


def _type_name(module_type: type) -> str:
    return f"{module_type.__module__}.{module_type.__qualname__}"


class EthosUQuantizer(Quantizer):
    """Annotates a model for int8 execution on the Ethos-U described by ``compile_spec``.

    The default global config is :func:`get_symmetric_quantization_config` (int8
    per-channel symmetric weights, int8 per-tensor affine activations, int32 bias).
    ``compile_spec`` may be None for target-independent use. Every Ethos-U (U55, U65,
    U85) takes the same int8 scheme; the spec is kept so that later passes can ask
    which target the annotations were made for.
    """

    #: Averages (pools, means) keep their input's qparams. The Ethos-U lowering gives them
    #: their own finer step (patterns.AVERAGE); backends whose average kernels need the
    #: input's qparams (Cortex-M, XNNPACK) set this.
    shared_averages = False

    def __init__(self, compile_spec: EthosUCompileSpec | None = None, *,
                 is_qat: bool = False, activations: str = "int8",
                 int16_modules: Iterable[str] = ()) -> None:
        """``activations="int16"`` quantizes every activation to 16 bits (a16w8: int8
        weights); ``int16_modules`` names submodules (as in ``named_modules()``) whose
        activations are 16-bit while the rest keep ``activations``. Operators the
        Ethos-U cannot run in 16 bits keep int8 either way: :attr:`kept_int8` lists them
        after annotation, with the reason."""
        super().__init__()
        if activations not in ("int8", "int16"):
            raise ValueError(f"activations must be 'int8' or 'int16', got {activations!r}")
        self.compile_spec = compile_spec
        self.global_config: QuantizationConfig | None = (
            get_a16w8_quantization_config(is_qat=is_qat) if activations == "int16"
            else get_symmetric_quantization_config(is_qat=is_qat))
        self.module_type_configs: dict[str, QuantizationConfig | None] = {}
        self.module_name_configs: dict[str, QuantizationConfig | None] = {}
        self.io_config: QuantizationConfig | None = None
        self._precision = PrecisionChooser()
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

    # ------------------------------------------------------------------ configuration
    def set_global(self, config: QuantizationConfig | None) -> EthosUQuantizer:
        """Config for every node not covered by a module-scoped config (None: float)."""
        self.global_config = config
        return self

    def set_module_type(self, module_type: type[torch.nn.Module],
                        config: QuantizationConfig | None) -> EthosUQuantizer:
        """Config for nodes inside any module of ``module_type`` (None: leave them float)."""
        self.module_type_configs[_type_name(module_type)] = config
        return self

    def set_module_name(self, module_name: str, config: QuantizationConfig | None) -> EthosUQuantizer:
        """Config for nodes inside the submodule ``module_name`` (as in named_modules())."""
        self.module_name_configs[module_name] = config
        return self

    def set_io(self, config: QuantizationConfig | None) -> EthosUQuantizer:
        """Quantize the model's inputs and outputs themselves with ``config``.

        The quantized program then starts with a quantize right after each input and
        ends with a dequantize before each output, even where the first/last op stays
        float; ``None`` (the default) quantizes them only where an op needs it.
        """
        self.io_config = config
        return self

    def config_for(self, node: Node) -> QuantizationConfig | None:
        """The config that applies to ``node`` (see the module docstring for precedence)."""
        stack = list((node.meta.get("nn_module_stack") or {}).values())
        for path, _ in reversed(stack):
            config = self.module_name_configs.get(_module_path(path), _UNSET)
            if config is not _UNSET:
                return config  # type: ignore[return-value]
        for _, module_type in reversed(stack):
            name = module_type if isinstance(module_type, str) else _type_name(module_type)
            config = self.module_type_configs.get(name, _UNSET)
            if config is not _UNSET:
                return config  # type: ignore[return-value]
        return self.global_config

    def _config_following_producer(self, node: Node) -> QuantizationConfig | None:
        """:meth:`config_for`, except that after a 16-bit producer an operator without
        arithmetic (a view, a clamp: patterns.SHARED), or one written in the model's own
        forward (no submodule of its own: a functional relu, mean, add), takes the producer's
        16-bit config: such an operator should neither split the layer's fused activation
        nor requantize to int8 for nothing."""
        config = self.config_for(node)
        source = node.args[0] if node.args else None
        in_no_submodule = not any(_module_path(path) for path, _ in (node.meta.get("nn_module_stack") or {}).values())
        if (node.target in patterns.SHARED or in_no_submodule) and not is_int16(config) \
                and isinstance(source, Node) and source.op == "call_function":
            producer = self._config_following_producer(source)
            if is_int16(producer):
                return producer
        return config

    # ------------------------------------------------------------------ Quantizer API
    def transform_for_annotation(self, model: GraphModule) -> GraphModule:
        """GRU/LSTM layers become their cells' operators, unrolled over time (recurrent.py), GLUs
        their halves, sigmoid and product (glu.py), and scaled_dot_product_attention its matrix
        products and softmax (attention.py)."""
        return write_out_attention(write_out_glu(unroll_recurrent_layers(model)))

    def annotate(self, model: GraphModule) -> GraphModule:
        graph = model.graph
        if self.io_config is not None:
            annotate_inputs(graph, self.io_config)
        self._precision = PrecisionChooser()
        GraphAnnotator(lambda node: self._precision(node, self._config_following_producer(node)), shared_averages=self.shared_averages).annotate(graph)
        if self.io_config is not None:
            annotate_outputs(graph, self.io_config)
        return leave_infinities_float(model)  # an infinity has no integer code

    def record_precision(self, program: torch.export.ExportedProgram) -> None:
        """Writes :attr:`kept_int8` into the quantized ``program`` for the partition report."""
        if self.kept_int8:
            program.graph_module.meta[PRECISION_NOTES_KEY] = [str(kept) for kept in self.kept_int8]

    def validate(self, model: GraphModule) -> None:
        """Nothing to reject: ops the Ethos-U cannot run are the partitioner's business."""
