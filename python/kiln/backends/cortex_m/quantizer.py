"""``CortexMQuantizer``: int8 PT2E quantization for the ``cortex_m::`` (CMSIS-NN) kernels.

    quantizer = CortexMQuantizer("cortex-m55")
    quantized = kiln.quantize(model, (x,), quantizer, calibration_samples)
    program = kiln.export(quantized, cpu_lowering=CortexMLowering())

The scheme is the Ethos-U quantizer's (int8 per-tensor affine activations, symmetric int8
weights per output channel, int32 bias at input scale x weight scale) with two changes:
fully connected layers get one weight scale per tensor, because CMSIS-NN's (and so
``cortex_m::quantized_linear``'s) requantization takes a single multiplier and shift; and
``minimum``, ``maximum`` and ``div``, which the NPU flow leaves float, are quantized as
arithmetic, since the Cortex-M kernels run them on int8.
Module-scoped configs (``set_module_type``/``set_module_name``, ``None`` = float) work as
in every :class:`kiln.delegation.quantizer.ModuleScopedQuantizer`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
from torch.fx import Node
from torchao.quantization.pt2e import MinMaxObserver
from torchao.quantization.pt2e.quantizer import DerivedQuantizationSpec, QuantizationSpec

from kiln.delegation.quantizer.annotator import GraphAnnotator, annotate_inputs, annotate_outputs, is_annotated
from kiln.delegation.quantizer.base import ModuleScopedQuantizer
from kiln.delegation.quantizer.config import QuantizationConfig, get_symmetric_quantization_config
from kiln.targets import DEFAULT_CORTEX_M_TARGET, check_cortex_m_target

_LINEAR = {torch.ops.aten.linear.default}
#: Elementwise ops the Ethos-U annotation leaves float (the NPU flow has no use for them
#: quantized) that the Cortex-M lowering runs on int8 kernels: each input and the output
#: get their own qparams, as for the other arithmetic.
_CORTEX_M_ARITHMETIC = {torch.ops.aten.minimum.default, torch.ops.aten.maximum.default, torch.ops.aten.div.Tensor}


class _CortexMAnnotator(GraphAnnotator):
    """The Ethos-U annotation, then _CORTEX_M_ARITHMETIC as arithmetic: by then their
    producers are annotated, so the operands share the producers' qparams."""

    def annotate(self, graph: torch.fx.Graph) -> None:
        super().annotate(graph)
        for node in graph.nodes:
            if node.op == "call_function" and node.target in _CORTEX_M_ARITHMETIC and not is_annotated(node):
                config = self._config_for(node)
                if config is not None:
                    self._annotate_arithmetic(node, config)


@dataclass(frozen=True)
class CortexMQuantizationConfig(QuantizationConfig):
    """:class:`QuantizationConfig` whose fully connected layers have per-tensor weights."""

    def weight_spec(self, node: Node) -> QuantizationSpec:
        if node.target in _LINEAR and self.weight.qscheme is torch.per_channel_symmetric:
            return dataclasses.replace(self.weight, qscheme=torch.per_tensor_symmetric, ch_axis=None,
                                       observer_or_fake_quant_ctr=_per_tensor_weight_observer(self))
        return super().weight_spec(node)

    def bias_spec(self, node: Node) -> DerivedQuantizationSpec:
        spec = super().bias_spec(node)
        if node.target in _LINEAR:
            return dataclasses.replace(spec, qscheme=torch.per_tensor_symmetric)
        return spec


def _per_tensor_weight_observer(config: QuantizationConfig):
    if config.is_qat:
        from torchao.quantization.pt2e import FakeQuantize

        return FakeQuantize.with_args(observer=MinMaxObserver, quant_min=config.weight.quant_min,
                                      quant_max=config.weight.quant_max, dtype=torch.qint8,
                                      qscheme=torch.per_tensor_symmetric, eps=2.0**-16)
    return MinMaxObserver.with_args(eps=2.0**-16)


def get_cortex_m_quantization_config(*, is_qat: bool = False, observer: str = "minmax") -> CortexMQuantizationConfig:
    """The Cortex-M default config (see the module docstring)."""
    base = get_symmetric_quantization_config(is_qat=is_qat, observer=observer)  # type: ignore[arg-type]
    return CortexMQuantizationConfig(activation=base.activation, weight=base.weight, is_qat=is_qat)


class CortexMQuantizer(ModuleScopedQuantizer):
    """Annotates a model for int8 execution on the ``cortex_m::`` kernels of ``target``
    (cortex-m4, -m7, -m33, -m55 or -m85: the same integers on each, faster with DSP or
    Helium)."""

    shared_averages = True  # its average-pool kernels work at the input's qparams

    def __init__(self, target: str = DEFAULT_CORTEX_M_TARGET, *, is_qat: bool = False) -> None:
        super().__init__(get_cortex_m_quantization_config(is_qat=is_qat))
        self.target = check_cortex_m_target(target)

    def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        graph = model.graph
        if self.io_config is not None:
            annotate_inputs(graph, self.io_config)
        _CortexMAnnotator(self.config_for, shared_averages=self.shared_averages).annotate(graph)
        if self.io_config is not None:
            annotate_outputs(graph, self.io_config)
        return model


__all__ = ["CortexMQuantizationConfig", "CortexMQuantizer", "get_cortex_m_quantization_config"]
