"""What the partitioner delegates per target for the shapes users bring beyond CNNs: recurrent
layers, 1-D convolutions, attention, squeeze-and-excitation, upsampling, transposed
convolutions and embeddings. Where a target cannot take an operator, the node stays on the
CPU with the reason; programs that compile run (on ethos-u55-128's virtual NPU) close to
the quantized PyTorch model."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import kiln
import kiln.runtime
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner

from .conftest import partition, quantize  # type: ignore[import-not-found]
from .models_beyond_cnns import (  # type: ignore[import-not-found]
    Attention, Conv1dTimeSeries, Decoder, GruClassifier, LstmClassifier, SqueezeExcite, TokenClassifier, UNetStep,
    Upsampler,
)

TARGETS = ["ethos-u55-128", "ethos-u65-256", "ethos-u85-256"]
BOUNDARY = "boundary:"

MODELS = {
    "gru": (GruClassifier, (1, 4, 8)),
    "lstm": (LstmClassifier, (1, 3, 8)),
    "conv1d": (Conv1dTimeSeries, (1, 3, 32)),
    "attention": (Attention, (1, 8, 32)),
    "squeeze_excite": (SqueezeExcite, (1, 3, 12, 12)),
    "unet_nearest": (lambda: UNetStep("nearest"), (1, 3, 16, 16)),
    "unet_bilinear": (lambda: UNetStep("bilinear"), (1, 3, 16, 16)),
    "decoder": (lambda: Decoder(2), (1, 8, 6, 6)),
}


@pytest.fixture(scope="module")
def quantized() -> Any:
    """name -> (quantized program, example input), quantized once."""
    cache: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in cache:
            make, shape = MODELS[name] if name in MODELS else OTHERS[name]
            torch.manual_seed(0)
            inputs = (torch.randn(shape),)
            cache[name] = quantize(make(), inputs), inputs
        return cache[name]

    return get


OTHERS = {
    "upsample_bilinear_3x": (lambda: Upsampler(3, "bilinear"), (1, 4, 6, 6)),
    "decoder_stride3": (lambda: Decoder(3), (1, 8, 6, 6)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_operator_is_delegated_on_every_target(quantized: Any, name: str) -> None:
    program, _ = quantized(name)
    for target in TARGETS:
        _, result = partition(program, target)
        left = [(d.node, d.operator, d.reason) for d in result.report.rejections() if not d.reason.startswith(BOUNDARY)]
        assert not left, f"{name} on {target}: {left}"
        assert len(result.partitions) == 1, f"{name} on {target}: {len(result.partitions)} partitions"


def _cpu_reasons(result: Any, operator: str) -> list[str]:
    return [d.reason for d in result.report.decisions if d.operator == operator and not d.delegated]


# The quantized flow keeps interpolate whole, or spells it as index reads with computed indices.
UPSAMPLING_OPERATORS = ("aten::upsample_bilinear2d.vec", "aten::index.Tensor")


def test_bilinear_upsampling_by_3_runs_on_u85_and_stays_on_the_cpu_elsewhere(quantized: Any) -> None:
    program, _ = quantized("upsample_bilinear_3x")
    _, u85 = partition(program, "ethos-u85-256")
    assert not [r for op in UPSAMPLING_OPERATORS for r in _cpu_reasons(u85, op)]
    _, u55 = partition(program, "ethos-u55-128")
    reasons = [r for op in UPSAMPLING_OPERATORS for r in _cpu_reasons(u55, op)]
    assert reasons and all("bilinear RESIZE is Ethos-U85 only" in r for r in reasons), reasons


def test_transposed_convolution_stride_3_is_u85_only(quantized: Any) -> None:
    program, _ = quantized("decoder_stride3")
    _, u85 = partition(program, "ethos-u85-256")
    assert not _cpu_reasons(u85, "aten::convolution")
    _, u55 = partition(program, "ethos-u55-128")
    [reason] = _cpu_reasons(u55, "aten::convolution")
    assert "stride [3, 3]: ethos-u55 supports stride 1 or 2" in reason


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_embedding_gathers_on_u85_from_int32_ids(dtype: torch.dtype) -> None:
    from kiln.backends.arm import EthosUQuantizer

    generator = torch.Generator().manual_seed(0)
    samples = [(torch.randint(0, 30, (1, 6), dtype=dtype, generator=generator),) for _ in range(3)]
    torch.manual_seed(0)
    program = kiln.quantize(TokenClassifier().eval(), samples[0], EthosUQuantizer(), samples, progress=False)
    _, u85 = partition(program, "ethos-u85-256")
    _, u55 = partition(program, "ethos-u55-128")
    if dtype == torch.int32:
        assert not _cpu_reasons(u85, "aten::embedding")
    else:
        [reason] = _cpu_reasons(u85, "aten::embedding")
        assert "int64; the NPU's GATHER reads int32 indices" in reason
    [reason] = _cpu_reasons(u55, "aten::embedding")
    expected = "int64" if dtype == torch.int64 else "(GATHER) is not supported by ethos-u55 (only ethos-u85)"
    assert expected in reason, reason


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gru", "attention", "conv1d", "unet_bilinear"])
def test_compiled_program_runs_close_to_the_quantized_model(quantized: Any, name: str) -> None:
    program, inputs = quantized(name)
    spec = EthosUCompileSpec("ethos-u55-128")
    compiled = kiln.export(program, partitioner=EthosUPartitioner(spec))
    assert len(compiled.compile_report.delegates) == 1
    method = kiln.runtime.Runtime().load_program(compiled.to_bytes()).load_method("forward")
    for seed in range(2):
        x = torch.randn(inputs[0].shape, generator=torch.Generator().manual_seed(seed + 1))
        (actual,) = method.execute([x.numpy()])
        expected = program.module()(x).detach().numpy()
        step = _output_step(program)
        steps = np.abs(np.asarray(actual) - expected) / step
        assert steps.max() <= 3, f"{name}: {steps.max():.1f} output steps from quantized PyTorch"


def _output_step(program: torch.export.ExportedProgram) -> float:
    output = program.graph.output_node().args[0][0]
    assert output.target == torch.ops.quantized_decomposed.dequantize_per_tensor.default
    return float(output.args[1])
