"""Every zoo model's Cortex-M program runs its int8 part on int8 kernels: after
CortexMQuantizer and the cortex_m:: lowering, no call reads or writes a float tensor except
the input quantize and the output dequantize (cortex_m:: kernels). What runs on portable
kernels (views, selects, splits, concatenations, nearest upsampling of int8 tensors) only
moves int8 values.
"""

from __future__ import annotations

import operator

import pytest
import torch

import kiln
import kiln.models
from kiln.backends.cortex_m import CortexMQuantizer, to_cortex_m
from kiln.cli.aot import calibration_samples

pytestmark = pytest.mark.slow

#: Calls that reserve memory rather than compute (a kernel's scratch buffer).
_BOOKKEEPING = {torch.ops.aten.empty.memory_format, operator.getitem}


def _dtypes(value: object) -> list[torch.dtype]:
    if isinstance(value, torch.Tensor):
        return [value.dtype]
    if isinstance(value, (list, tuple)):
        return [d for v in value for d in _dtypes(v)]
    return []


def float_calls(graph: torch.fx.Graph) -> list[str]:
    """The calls outside the cortex_m:: and kiln:: int8 kernels that touch a float tensor."""
    found = []
    for node in graph.nodes:
        if node.op != "call_function" or node.target in _BOOKKEEPING:
            continue
        name = node.target.name() if isinstance(node.target, torch._ops.OpOverload) else str(node.target)
        if name.startswith(("cortex_m::", "kiln::")):
            continue
        inputs = [a for a in node.args if isinstance(a, torch.fx.Node)]
        inputs += [t for a in node.args if isinstance(a, (list, tuple)) for t in a if isinstance(t, torch.fx.Node)]
        dtypes = _dtypes(node.meta.get("val")) + [d for a in inputs for d in _dtypes(a.meta.get("val"))]
        if any(d.is_floating_point for d in dtypes):
            found.append(f"{node.name} ({name})")
    return found


@pytest.mark.parametrize("name", kiln.models.names())
def test_zoo_model_runs_no_float_kernel_between_quantize_and_dequantize(name: str) -> None:
    model, inputs = kiln.models.get(name)
    quantized = kiln.quantize(model, inputs, CortexMQuantizer("cortex-m55"), calibration_samples(inputs, 2),
                              progress=False)
    _, graph, report = to_cortex_m(quantized)
    assert not float_calls(graph.graph), f"{name}: float calls left: {float_calls(graph.graph)} ({report.line()})"
