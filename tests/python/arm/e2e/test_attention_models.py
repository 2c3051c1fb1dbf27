"""Attention as public model code writes it, on the Ethos-U: ``F.scaled_dot_product_attention``
(no mask, ``is_causal=True``, a boolean ``attn_mask``), a causal ``masked_fill`` before an
explicit softmax, and ``nn.MultiheadAttention`` (with and without its returned weights);
and MobileNetV3 in torchvision's structure.

Each is one delegate with no compute left on the CPU on ethos-u85-256 and ethos-u55-128
(only the program's input quantize and output dequantize stay there). The int8 programs
run on the virtual NPU: every delegate equals Arm's TOSA reference model on the graph
Kiln lowered, bit for bit, and the program stays within a few output steps of the
quantized PyTorch model (PyTorch's float softmax, layer norm and GELU against the NPU's
integer ones; further for the 12 blocks of DeiT-tiny and for MobileNetV3, see
DEEP_LSB_FROM_QUANTIZED_PYTORCH). The fp32 programs (Kiln's CPU kernels, attention decomposed by core ATen)
match eager PyTorch.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import kiln
from kiln import _runtime
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.export.evaluate import output_lsb
from kiln.models.calibration import example_input
from kiln.models.causal_decoder import make_causal_decoder
from kiln.models.deit import make_attention_block, make_deit_tiny
from kiln.models.mha_encoder import make_mha_encoder
from kiln.models.mobilenet_v3_torchvision import make_mobilenet_v3_torchvision
from kiln.runtime import Runtime

TARGETS = ["ethos-u85-256", "ethos-u55-128"]
_NUMPY = {"int8": np.int8, "int16": np.int16, "int32": np.int32}
# The NPU's integer softmax, layer norm and GELU table against PyTorch's float ones
# (measured with these calibration samples: at most 2 steps, 0.01 on average, on the decoders;
# exact on the encoders).
MAX_LSB_FROM_QUANTIZED_PYTORCH = 3.0
MEAN_LSB_FROM_QUANTIZED_PYTORCH = 0.1
# Deep networks drift further: 12 blocks of integer layer norm, softmax and GELU (DeiT-tiny,
# measured 12 steps at most, 3.1 on average) and MobileNetV3's hardswish/squeeze-excite
# chain (8 and 1.9). Issue 22 item 9 is about closing that gap; these bounds catch worse.
DEEP_LSB_FROM_QUANTIZED_PYTORCH = {"deit_tiny": (16.0, 4.0), "mobilenet_v3_torchvision": (12.0, 2.5)}

ModelFactory = Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]


class ScaledMaskedAttention(torch.nn.Module):
    """``F.scaled_dot_product_attention`` with a ``scale`` of its own and an additive float
    mask (0 where a key is seen, -inf where it is hidden: a sliding window of 4 tokens)."""

    def __init__(self, dim: int = 32, heads: int = 2, tokens: int = 12) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        distance = torch.arange(tokens)[:, None] - torch.arange(tokens)[None, :]
        window = (distance >= 0) & (distance < 4)
        self.register_buffer("mask", torch.zeros(tokens, tokens).masked_fill(~window, float("-inf")))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        q, k, v = self.qkv(x).view(batch, tokens, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask, scale=0.3)
        return x + self.proj(y.transpose(1, 2).reshape(batch, tokens, dim))


def _scaled_masked_attention() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return ScaledMaskedAttention(), (example_input((1, 12, 32)),)

ATTENTION: dict[str, ModelFactory] = {
    "decoder_is_causal": lambda: make_causal_decoder("is_causal"),
    "decoder_attn_mask": lambda: make_causal_decoder("attn_mask"),
    "decoder_masked_fill": lambda: make_causal_decoder("masked_fill"),
    "mha_encoder": make_mha_encoder,
    "mha_encoder_need_weights": lambda: make_mha_encoder(need_weights=True),
    "sdpa_scale_float_mask": _scaled_masked_attention,
}
ONE_DELEGATE: dict[str, ModelFactory] = {
    "attention_block": make_attention_block,
    "deit_tiny": make_deit_tiny,
    "mobilenet_v3_torchvision": make_mobilenet_v3_torchvision,
}


@pytest.fixture(scope="module")
def quantized() -> Callable[[str], tuple[Any, tuple[torch.Tensor, ...]]]:
    """name -> (quantized program, example inputs), quantized once per module."""
    cache: dict[str, Any] = {}

    def get(name: str) -> tuple[Any, tuple[torch.Tensor, ...]]:
        if name not in cache:
            logging.getLogger("torchao").setLevel(logging.ERROR)
            model, inputs = {**ATTENTION, **ONE_DELEGATE}[name]()
            samples = [tuple(example_input(tuple(x.shape), seed=seed) for x in inputs) for seed in range(2, 6)]
            quantizer = EthosUQuantizer(EthosUCompileSpec(TARGETS[0]))
            cache[name] = kiln.quantize(model.eval(), inputs, quantizer, samples, progress=False), inputs
        return cache[name]

    return get


def _compile(program: Any, target: str) -> Any:
    return kiln.export(program, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))


def _assert_one_delegate(compiled: Any, name: str, target: str) -> None:
    report = compiled.compile_report
    partition = report.partition_report
    cpu_compute = [(d.node, d.operator, d.reason) for d in partition.rejections()
                   if "quantize_per_" not in d.operator]
    assert not cpu_compute, f"{name} on {target}: compute left on the CPU: {cpu_compute}"
    assert partition.splits == [], f"{name} on {target}: Vela rejected a subgraph: {partition.splits}"
    assert len(report.delegates) == 1, f"{name} on {target}: {len(report.delegates)} delegates"


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(ONE_DELEGATE))
def test_vit_and_mobilenet_v3_are_one_delegate_that_runs_on_the_virtual_npu(quantized: Any, name: str, target: str) -> None:
    program, inputs = quantized(name)
    compiled = _compile(program, target)
    _assert_one_delegate(compiled, name, target)
    most, mean = DEEP_LSB_FROM_QUANTIZED_PYTORCH.get(name, (MAX_LSB_FROM_QUANTIZED_PYTORCH,
                                                            MEAN_LSB_FROM_QUANTIZED_PYTORCH))
    _check_on_the_virtual_npu(program, compiled, inputs, name, target, most, mean)


@pytest.mark.parametrize("name", sorted(ATTENTION))
def test_fp32_program_matches_eager_pytorch(name: str) -> None:
    model, inputs = ATTENTION[name]()
    model.eval()
    program = kiln.export(model, inputs)
    got = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x.numpy() for x in inputs])
    with torch.no_grad():
        expected = model(*inputs).numpy()
    np.testing.assert_allclose(np.asarray(got[0]), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(ATTENTION))
def test_int8_program_runs_on_the_virtual_npu(quantized: Any, name: str, target: str) -> None:
    program, inputs = quantized(name)
    compiled = _compile(program, target)
    _assert_one_delegate(compiled, name, target)
    _check_on_the_virtual_npu(program, compiled, inputs, name, target)


@pytest.mark.parametrize("target", TARGETS)
def test_attention_over_more_than_64_tokens_runs_on_the_virtual_npu(target: str) -> None:
    """Vela runs a reduction over the 65 keys of the softmax as a 1x65 pooling (DeiT's 197
    tokens: 1x197), wider than the virtual NPU took before."""
    model, inputs = make_attention_block(tokens=65)
    samples = [(example_input((1, 65, 192), seed=seed),) for seed in range(2, 6)]
    program = kiln.quantize(model.eval(), inputs, EthosUQuantizer(EthosUCompileSpec(target)), samples,
                            progress=False)
    compiled = _compile(program, target)
    _assert_one_delegate(compiled, "attention_block over 65 tokens", target)
    _check_on_the_virtual_npu(program, compiled, inputs, "attention_block over 65 tokens", target)


def _check_on_the_virtual_npu(program: Any, compiled: Any, inputs: tuple[torch.Tensor, ...], name: str,
                              target: str, most: float = MAX_LSB_FROM_QUANTIZED_PYTORCH,
                              mean: float = MEAN_LSB_FROM_QUANTIZED_PYTORCH) -> None:
    # The delegate against the TOSA reference model, on random int8 inputs.
    pre = compiled.compile_report.delegates[0].preprocessed
    specs = [(key, bytes(value)) for key, value in pre.compile_specs]
    for seed in range(2):
        rng = np.random.default_rng(seed)
        npu_inputs = [rng.integers(-128, 128, size=io.shape).astype(_NUMPY[io.dtype]) for io in pre.tosa.inputs]
        outputs = [np.zeros(io.shape, dtype=_NUMPY[io.dtype]) for io in pre.tosa.outputs]
        _runtime.ethos_u_run_payload(pre.blob, specs, npu_inputs, outputs)
        for index, (got, expected) in enumerate(zip(outputs, pre.tosa.run_reference(npu_inputs))):
            differ = int(np.count_nonzero(got != expected.reshape(got.shape)))
            assert differ == 0, f"{name} {target} output {index}, seed {seed}: {differ} elements differ"

    # The whole program on the runtime against the quantized PyTorch model.
    got = Runtime().load_program(compiled.to_bytes()).load_method("forward").execute([x.numpy() for x in inputs])
    with torch.no_grad():
        expected = program.module()(*inputs).numpy()
    [step] = output_lsb(program.graph)
    assert step is not None
    steps_off = np.abs(np.asarray(got[0], np.float64) - expected) / step
    assert steps_off.max() <= most + 1e-3, (
        f"{name} on {target}: {steps_off.max():.2f} LSB from quantized PyTorch")
    assert steps_off.mean() <= mean, (
        f"{name} on {target}: {steps_off.mean():.3f} LSB from quantized PyTorch on average")
