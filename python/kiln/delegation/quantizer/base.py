"""``ModuleScopedQuantizer``: the torchao PT2E ``Quantizer`` every backend's quantizer builds on.

Which config applies to a node: the innermost module named with ``set_module_name``
that contains it, else the innermost module whose type was given to
``set_module_type``, else the global config. ``None`` anywhere means "leave float"
(the op then runs on the CPU in float). Module scopes come from the
``nn_module_stack`` metadata that ``torch.export`` records on every node; below the
innermost module, the pieces a rewrite writes out (a recurrent layer's time steps,
``rnn.l0.steps.48``: scopes.py) have names of their own that ``set_module_name`` takes
too, and which win over their module's.

A backend's quantizer (``EthosUQuantizer``, ``XnnpackQuantizer``, ``CortexMQuantizer``)
chooses the global config and, where its kernels need it, its own annotation.
"""

from __future__ import annotations

from typing import TypeVar

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import Quantizer

from kiln.delegation.quantizer.annotator import GraphAnnotator, annotate_inputs, annotate_outputs
from kiln.delegation.quantizer.attention import write_out_attention
from kiln.delegation.quantizer.config import QuantizationConfig
from kiln.delegation.quantizer.glu import write_out_glu
from kiln.delegation.quantizer.infinities import leave_infinities_float
from kiln.delegation.quantizer.recurrent import check_subscope_names, unroll_recurrent_layers
from kiln.delegation.quantizer.scopes import SUBSCOPE_KEY, module_path

_UNSET = object()
_Self = TypeVar("_Self", bound="ModuleScopedQuantizer")


def _type_name(module_type: type) -> str:
    return f"{module_type.__module__}.{module_type.__qualname__}"


class ModuleScopedQuantizer(Quantizer):
    """Annotates a model with ``global_config``, or the config of the module a node is in."""

    #: Averages (pools, means) keep their input's qparams. The Ethos-U lowering gives them
    #: their own finer step (patterns.AVERAGE); backends whose average kernels need the
    #: input's qparams (Cortex-M, XNNPACK) set this.
    shared_averages = False

    def __init__(self, global_config: QuantizationConfig | None = None) -> None:
        super().__init__()
        self.global_config: QuantizationConfig | None = global_config
        self.module_type_configs: dict[str, QuantizationConfig | None] = {}
        self.module_name_configs: dict[str, QuantizationConfig | None] = {}
        self.io_config: QuantizationConfig | None = None

    # ------------------------------------------------------------------ configuration
    def set_global(self: _Self, config: QuantizationConfig | None) -> _Self:
        """Config for every node not covered by a module-scoped config (None: float)."""
        self.global_config = config
        return self

    def set_module_type(self: _Self, module_type: type[torch.nn.Module],
                        config: QuantizationConfig | None) -> _Self:
        """Config for nodes inside any module of ``module_type`` (None: leave them float)."""
        self.module_type_configs[_type_name(module_type)] = config
        return self

    def set_module_name(self: _Self, module_name: str, config: QuantizationConfig | None) -> _Self:
        """Config for nodes inside the submodule ``module_name`` (as in named_modules())."""
        self.module_name_configs[module_name] = config
        return self

    def set_io(self: _Self, config: QuantizationConfig | None) -> _Self:
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
        subscope = node.meta.get(SUBSCOPE_KEY)
        if subscope is not None and subscope in self.module_name_configs:
            return self.module_name_configs[subscope]  # a part of the innermost module (emit.py)
        for path, _ in reversed(stack):
            config = self.module_name_configs.get(module_path(path), _UNSET)
            if config is not _UNSET:
                return config  # type: ignore[return-value]
        for _, module_type in reversed(stack):
            name = module_type if isinstance(module_type, str) else _type_name(module_type)
            config = self.module_type_configs.get(name, _UNSET)
            if config is not _UNSET:
                return config  # type: ignore[return-value]
        return self.global_config

    # ------------------------------------------------------------------ Quantizer API
    def transform_for_annotation(self, model: GraphModule) -> GraphModule:
        """GRU/LSTM layers become their cells' operators, unrolled over time (recurrent.py), GLUs
        their halves, sigmoid and product (glu.py), and scaled_dot_product_attention its matrix
        products and softmax (attention.py). A configured name of a recurrent layer's part
        that the unrolled layer does not have is a ``RecurrentScopeError``."""
        model = unroll_recurrent_layers(model)
        check_subscope_names(model.graph, self.module_name_configs)
        return write_out_attention(write_out_glu(model))

    def annotate(self, model: GraphModule) -> GraphModule:
        graph = model.graph
        if self.io_config is not None:
            annotate_inputs(graph, self.io_config)
        GraphAnnotator(self.config_for, shared_averages=self.shared_averages).annotate(graph)
        if self.io_config is not None:
            annotate_outputs(graph, self.io_config)
        return leave_infinities_float(model)  # an infinity has no integer code

    def validate(self, model: GraphModule) -> None:
        """Nothing to reject: ops a backend cannot run are its partitioner's business."""
