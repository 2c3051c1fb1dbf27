"""Whole quantized zoo models (Kiln's quantizer) lowered as one subgraph.

The subgraph is everything between the input quantize and the output dequantize
(``qdq_cases.cut_quantized``, a stand-in for the partitioner). The TOSA reference
model is compared with the fake-quantized PyTorch graph on the same int8 input.
Tolerance: each rescaled layer may round one step differently (see
test_ops_reference.py); through MobileNetV2's 52 convolutions those steps add up to
a few output steps (ExecuTorch's own flow: up to 10 on the same model).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

TARGETS = ("ethos-u55-128", "ethos-u65-256", "ethos-u85-256")


def _quantized_subgraph(qdq, name: str, samples: int):
    import kiln.models
    import kiln.quantize
    from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer

    model, inputs = kiln.models.get(name)
    shape = inputs[0].shape
    data = [(torch.randn(shape, generator=torch.Generator().manual_seed(s)),) for s in range(samples)]
    program = kiln.quantize(model, inputs, EthosUQuantizer(EthosUCompileSpec("ethos-u55-128")), data,
                            progress=False)
    graph = qdq.cut_quantized(program)
    placeholder = next(n for n in graph.graph.nodes if n.op == "placeholder")
    dq = next(iter(placeholder.users))
    x_int8 = torch.ops.quantized_decomposed.quantize_per_tensor(inputs[0], dq.args[1], dq.args[2], -128, 127,
                                                                 torch.int8)
    return graph, x_int8


def _check(qdq, name: str, samples: int, max_steps: int, mean_steps: float) -> None:
    from kiln.backends.arm import EthosUCompileSpec
    from kiln.backends.arm.payload import pack, unpack
    from kiln.backends.arm.tosa import lower_to_tosa
    from kiln.backends.arm.vela import compile_tosa

    graph, x_int8 = _quantized_subgraph(qdq, name, samples)
    subgraph = lower_to_tosa(graph, EthosUCompileSpec("ethos-u55-128"), name=name)
    (result,) = subgraph.run_reference([x_int8.numpy()])
    expected = graph(x_int8)
    expected = (expected[0] if isinstance(expected, (tuple, list)) else expected).numpy()
    difference = np.abs(result.astype(np.int32) - expected.astype(np.int32))
    assert difference.max() <= max_steps and difference.mean() <= mean_steps, (difference.max(), difference.mean())
    assert len(np.unique(expected)) > 5
    for target in TARGETS:
        vela = compile_tosa(subgraph.flatbuffer, EthosUCompileSpec(target), name=name)
        assert vela.npu_cycles > 0 and vela.flash_bytes > len(vela.weights) > 0
        assert unpack(pack(vela)).command_stream == vela.command_stream


def test_smallcnn_whole_graph(qdq) -> None:
    _check(qdq, "smallcnn", samples=2, max_steps=1, mean_steps=0.05)


@pytest.mark.slow
def test_mv2_whole_graph(qdq) -> None:
    _check(qdq, "mv2", samples=2, max_steps=16, mean_steps=4.0)


@pytest.mark.slow
def test_transformer_whole_graph(qdq) -> None:
    """Layer norms, softmax, GELU, matmuls: the whole block is one TOSA graph."""
    _check(qdq, "transformer", samples=2, max_steps=3, mean_steps=0.2)
