"""``EthosUQuantizer``: a torchao PT2E ``Quantizer`` for what Vela and TOSA 1.0 INT accept.

    quantizer = EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"))   # global int8 config
    quantizer.set_module_type(torch.nn.LayerNorm, None)                # keep LayerNorms float
    quantizer.set_module_name("head", None)                            # and the head module
    program = kiln.quantize(model, inputs, quantizer, calibration_samples)

Which config applies to a node: see :class:`kiln.delegation.quantizer.ModuleScopedQuantizer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from torch.fx import GraphModule

from kiln.delegation.quantizer.annotator import GraphAnnotator, annotate_inputs, annotate_outputs
from kiln.delegation.quantizer.base import ModuleScopedQuantizer
from kiln.delegation.quantizer.config import QuantizationConfig, get_symmetric_quantization_config
from kiln.delegation.quantizer.infinities import leave_infinities_float

if TYPE_CHECKING:
    from kiln.backends.arm.compile_spec import EthosUCompileSpec


class EthosUQuantizer(ModuleScopedQuantizer):
    """Annotates a model for int8 execution on the Ethos-U described by ``compile_spec``.

    The default global config is :func:`get_symmetric_quantization_config` (int8
    per-channel symmetric weights, int8 per-tensor affine activations, int32 bias).
    ``compile_spec`` may be None for target-independent use. Every Ethos-U (U55, U65,
    U85) takes the same int8 scheme; the spec is kept so that later passes can ask
    which target the annotations were made for.
    """

    def __init__(self, compile_spec: EthosUCompileSpec | None = None, *,
                 is_qat: bool = False) -> None:
        super().__init__()
        self.compile_spec = compile_spec
        self.global_config: QuantizationConfig | None = get_symmetric_quantization_config(is_qat=is_qat)
        self.module_type_configs: dict[str, QuantizationConfig | None] = {}
        self.module_name_configs: dict[str, QuantizationConfig | None] = {}
        self.io_config: QuantizationConfig | None = None

    def annotate(self, model: GraphModule) -> GraphModule:
        graph = model.graph
        if self.io_config is not None:
            annotate_inputs(graph, self.io_config)
        GraphAnnotator(self.config_for, shared_averages=self.shared_averages).annotate(graph)
        if self.io_config is not None:
            annotate_outputs(graph, self.io_config)
        return leave_infinities_float(model)  # an infinity has no integer code

    def validate(self, model: GraphModule) -> None:
        """Nothing to reject: ops the Ethos-U cannot run are the partitioner's business."""
