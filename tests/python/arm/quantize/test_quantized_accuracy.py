"""Quantized zoo models stay close to their float originals.

Each model is calibrated on N(0, 1) samples (the distribution its batch norms were
estimated on) and evaluated on its example input, which is NOT among the calibration
samples.

Why these bounds: int8 per-tensor activations with min/max ranges of about +-4 sigma
have a step of 8 sigma / 256, i.e. rounding noise of ~0.009 sigma or ~41 dB SQNR per
quantized tensor. The noise of the K tensors along the network adds up (about
41 - 10 log10 K dB) and a randomly initialised network amplifies perturbations
from layer to layer instead of damping them as trained networks do. Measured on
this zoo: 25-36 dB for the shallow models (<= 12 quantized layers), 13-17 dB for the
~50-layer MobileNets (torchao's X86 quantizer gives 17-19 dB on mv3, so this is the
models, not the quantizer). The bounds keep ~5 dB of margin: 20 dB (10% RMS error)
for shallow models, 10 dB for MobileNets.

Top-1: logits of a random classifier are close together (mv3: 1000 classes within
+-0.2), so a swap between two classes closer than the quantization error is
expected. The test requires that the class the quantized model picks has a float
logit within 2x the max error of the float top-1; for the shallow classifiers it
must be the same class.
"""

from __future__ import annotations

import pytest
import torch

import kiln
import kiln.models
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer

# model -> (calibration samples, minimum SQNR in dB, top-1 rule: "exact", "margin" or None)
CASES: dict[str, tuple[int, float, str | None]] = {
    "smallcnn": (8, 20.0, "exact"),
    "resnet": (8, 20.0, "exact"),
    "dscnn": (8, 20.0, "exact"),
    # A reconstruction, not class scores. Its 8-unit bottleneck makes the held-out input
    # swing outside (or far inside) the calibrated ranges: measured 21.7 dB with 32
    # samples, 15.9 dB with 64, 24-28 dB on calibrated samples. Bound: 12 dB (25% RMS).
    "autoencoder": (32, 12.0, None),
    "transformer": (8, 20.0, None),  # token features
    "mv3": (4, 10.0, "margin"),
    "mv2": (3, 10.0, "margin"),
}


def _sqnr_db(reference: torch.Tensor, error: torch.Tensor) -> float:
    return float(10 * torch.log10(reference.pow(2).sum() / error.pow(2).sum().clamp_min(1e-20)))


@pytest.fixture(scope="module", params=list(CASES))
def quantized(request):
    name = request.param
    count, _, _ = CASES[name]
    model, inputs = kiln.models.get(name)
    generator = torch.Generator().manual_seed(100)
    samples = [tuple(torch.randn(x.shape, generator=generator) for x in inputs) for _ in range(count)]
    program = kiln.quantize(model, inputs, EthosUQuantizer(EthosUCompileSpec("ethos-u55-128")), samples,
                            progress=False)
    with torch.no_grad():
        reference, output = model(*inputs), program.module()(*inputs)
    return name, reference, output, program


def test_quantized_output_is_close_to_float(quantized) -> None:
    name, reference, output, _ = quantized
    _, min_sqnr, _ = CASES[name]
    error = output - reference
    sqnr = _sqnr_db(reference, error)
    relative = float(error.abs().max() / reference.abs().max())
    print(f"{name}: SQNR {sqnr:.1f} dB, max abs error {float(error.abs().max()):.4f} ({relative:.1%} of max)")
    assert sqnr >= min_sqnr


def test_quantized_top1(quantized) -> None:
    name, reference, output, _ = quantized
    rule = CASES[name][2]
    if rule is None:
        pytest.skip(f"{name} does not output class scores")
    ref, out = reference.flatten(), output.flatten()
    chosen, best = int(out.argmax()), int(ref.argmax())
    if rule == "exact":
        assert chosen == best
    else:
        print(f"{name}: top-1 float {best}, quantized {chosen}")
        max_error = float((out - ref).abs().max())
        assert float(ref[chosen]) >= float(ref[best]) - 2 * max_error


def test_quantized_program_carries_no_unused_weights(quantized) -> None:
    """The float weights replaced by int8 constants must not stay in the program."""
    name, _, _, program = quantized
    unused = [n.name for n in program.graph.nodes if n.op == "placeholder" and not n.users]
    assert unused == [], f"{name}: unused inputs {unused}"
