"""Architectures that public model code writes (and that ExecuTorch's Arm backend tests on
the Ethos-U), in our own small versions with seeded weights and settled BatchNorm
statistics: a Wav2Letter-style acoustic model (1-D convolutions, log_softmax head), a
DeepLabV3-style segmenter (dilated ResNet, ASPP, bilinear heads) and a Conformer-style
encoder (int32 ``lengths`` input, padding mask, a batch of 10 inside the attention), each
quantized from the ``nn.Module`` with ``kiln.quantize``. On ethos-u85-256 the Conformer is one
delegate with nothing on the CPU, its padding mask computed on the NPU.

For ethos-u55-128 and ethos-u85-256, each model:

* compiles, with what stays on the CPU named (only what the target cannot run);
* has every delegate bit-exact on the virtual NPU against the TOSA reference model on the
  graph Kiln lowered (random int8 inputs);
* runs as a whole program on Kiln's runtime within a few output steps of the quantized
  PyTorch model (the PT2E converted model, float between its quantize/dequantize pairs).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest
import torch

import kiln
from kiln import _runtime
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
from kiln.runtime import Runtime

from .segmentation_models import deeplab_v3  # type: ignore[import-not-found]
from .speech_models import conformer, wav2letter_head  # type: ignore[import-not-found]

pytestmark = pytest.mark.slow

TARGETS = ["ethos-u55-128", "ethos-u85-256"]
BUILDERS: dict[str, Callable[[], tuple[Any, Any, Any]]] = {
    "wav2letter": wav2letter_head,
    "deeplab_v3": deeplab_v3,
    "conformer": conformer,
}
# Largest and mean distance of the program's float outputs from quantized PyTorch, in output
# steps. Delegates are exact against the TOSA reference; what is left is where Kiln's integer
# lowering rounds differently from PyTorch's float arithmetic between quantize/dequantize
# pairs (bilinear upsampling, layer norm, the rescales of long residual chains) and, for the
# Conformer, the integer masked softmax (on U85; U55's float one on the CPU): measured 5 steps
# at most, 0.5 on average, on both targets.
MAX_LSB = {"wav2letter": 1, "deeplab_v3": 6, "conformer": 6}
MEAN_LSB = {"wav2letter": 0.05, "deeplab_v3": 1.0, "conformer": 1.0}
_NUMPY = {"int8": np.int8, "int16": np.int16, "int32": np.int32}


@dataclass
class Quantized:
    model: torch.nn.Module  # the float model
    program: Any  # the quantized ExportedProgram
    samples: list[tuple[torch.Tensor, ...]]


@pytest.fixture(scope="module")
def compiled() -> Callable[[str, str], tuple[Quantized, kiln.Program]]:
    """(model, target) -> (its quantized model, its compiled program); each model quantized
    once (the Ethos-U quantizer is the same for every target), each program compiled once."""
    cache: dict[Any, Any] = {}

    def get(name: str, target: str) -> tuple[Quantized, kiln.Program]:
        if name not in cache:
            logging.getLogger("torchao").setLevel(logging.ERROR)
            model, inputs, samples = BUILDERS[name]()
            quantizer = EthosUQuantizer(EthosUCompileSpec(TARGETS[0]))
            cache[name] = Quantized(model, kiln.quantize(model, inputs, quantizer, samples, progress=False), samples)
        if (name, target) not in cache:
            partitioner = EthosUPartitioner(EthosUCompileSpec(target))
            cache[name, target] = kiln.export(cache[name].program, partitioner=partitioner)
        return cache[name], cache[name, target]

    return get


def _cpu_compute(program: kiln.Program) -> dict[str, str]:
    """operator -> reason, for the compute nodes left on the CPU (not the quantize/dequantize
    pairs at the delegates' boundaries)."""
    report = program.compile_report.partition_report
    return {d.operator: d.reason for d in report.rejections() if not d.operator.startswith("quantized_decomposed::")}


@pytest.mark.parametrize("target", TARGETS)
def test_wav2letter_is_one_delegate(compiled: Any, target: str) -> None:
    _, program = compiled("wav2letter", target)
    report = program.compile_report.partition_report
    assert len(report.partitions) == 1 and not report.splits, report.table()
    assert _cpu_compute(program) == {}, report.table()
    assert report.partitions[0].operator_counts.get("aten::_log_softmax") == 1


@pytest.mark.parametrize("target", TARGETS)
def test_deeplab_v3_leaves_only_what_the_target_cannot_upsample(compiled: Any, target: str) -> None:
    quantized, program = compiled("deeplab_v3", target)
    report = program.compile_report.partition_report
    assert not report.splits, report.splits
    cpu = _cpu_compute(program)
    if target.startswith("ethos-u85"):
        assert len(report.partitions) == 1 and cpu == {}, report.table()
    else:
        # Vela's Ethos-U55 resizes by 2x only: the image-pooling branch (1x1 -> 8x8) and the
        # head (x8) stay on the CPU, as in ExecuTorch's programs for DeepLabV3.
        assert set(cpu) == {"aten::upsample_bilinear2d.vec"}, report.table()
    convolutions = sum(p.operator_counts.get("aten::convolution", 0) for p in report.partitions)
    # Every convolution is delegated, the dilated ones included.
    assert convolutions == sum(isinstance(m, torch.nn.Conv2d) for m in quantized.model.modules()), report.table()


# The Conformer's padding mask comes from its int32 ``lengths`` input (arange >= lengths, then
# where(mask, -inf, 0) added to the attention scores). On the Ethos-U85 all of it runs on the
# NPU: the comparison and SELECT on the int32/bool values, the softmax applying the mask (and
# its safe-softmax guard). Vela lists comparisons, logical operators and SELECT for the U85
# only: on the U55 those stay on the CPU, named so, and with them what computes in float with
# the -inf mask (the views carrying it, the masked add and softmax); everything else
# (feed-forward and convolution modules, projections, the attention's matrix products, layer
# norms) is delegated.
CONFORMER_U85_ONLY = {"aten::ge.Tensor", "aten::where.self", "aten::eq.Scalar", "aten::logical_not", "aten::any.dim"}
CONFORMER_U55_CPU = CONFORMER_U85_ONLY | {
    "aten::arange.start_step", "aten::expand", "aten::unsqueeze", "aten::full_like", "aten::scalar_tensor",
    "aten::view", "aten::clone", "aten::add.Tensor", "aten::_softmax",
}


@pytest.mark.parametrize("target", TARGETS)
def test_conformer_quantizes_from_the_module_and_delegates_its_masked_attention_on_u85(
        compiled: Any, target: str) -> None:
    _, program = compiled("conformer", target)
    report = program.compile_report.partition_report
    assert not report.splits, report.splits
    cpu = _cpu_compute(program)
    delegated = {op for p in report.partitions for op in p.operator_counts}
    assert {"aten::convolution", "aten::addmm", "aten::native_layer_norm", "aten::sigmoid", "aten::bmm"} <= delegated
    if target.startswith("ethos-u85"):
        assert len(report.partitions) == 1 and cpu == {}, report.table()
        assert {"aten::ge.Tensor", "aten::where.self", "aten::_softmax"} <= delegated, report.table()
        # The int32 lengths input enters the delegate as it is (never quantized).
        assert "lengths" in report.partitions[0].inputs, report.partitions[0].inputs
    else:
        assert CONFORMER_U85_ONLY <= set(cpu) <= CONFORMER_U55_CPU, report.table()
        for op in CONFORMER_U85_ONLY:
            assert "only ethos-u85" in cpu[op], (op, cpu[op])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_delegates_match_the_tosa_reference(compiled: Any, name: str, target: str) -> None:
    _, program = compiled(name, target)
    for delegate in program.compile_report.delegates:
        pre = delegate.preprocessed
        specs = [(k, bytes(v)) for k, v in pre.compile_specs]
        rng = np.random.default_rng(0)
        inputs = [rng.integers(-128, 128, size=io.shape).astype(_NUMPY[io.dtype]) for io in pre.tosa.inputs]
        outputs = [np.zeros(io.shape, dtype=_NUMPY[io.dtype]) for io in pre.tosa.outputs]
        _runtime.ethos_u_run_payload(pre.blob, specs, inputs, outputs)
        for k, (got, expected) in enumerate(zip(outputs, pre.tosa.run_reference(inputs))):
            differ = int(np.count_nonzero(got != expected.reshape(got.shape)))
            assert differ == 0, (f"{name} {target} {delegate.name} output {k}: {differ} of {expected.size} "
                                 "elements differ from the TOSA reference")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_program_runs_within_a_few_steps_of_quantized_pytorch(compiled: Any, name: str, target: str) -> None:
    quantized, program = compiled(name, target)
    inputs = quantized.samples[1]  # not the example input
    got = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x.numpy() for x in inputs])
    with torch.no_grad():
        expected = quantized.program.module()(*inputs)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    results = next(n for n in reversed(quantized.program.graph.nodes) if n.op == "output").args[0]
    assert len(got) == len(expected)
    for k, (g, e, result) in enumerate(zip(got, expected, results)):
        g, e = np.asarray(g), e.numpy()
        assert g.shape == e.shape, f"{name} output {k}"
        if "dequantize" not in str(result.target):  # an integer output passed through (lengths)
            np.testing.assert_array_equal(g, e)
            continue
        lsb = np.abs(g.astype(np.float64) - e.astype(np.float64)) / float(result.args[1])
        assert lsb.max() <= MAX_LSB[name] + 1e-3, f"{name} {target} output {k}: {lsb.max():.2f} steps off"
        assert lsb.mean() <= MEAN_LSB[name], f"{name} {target} output {k}: {lsb.mean():.3f} steps off on average"
