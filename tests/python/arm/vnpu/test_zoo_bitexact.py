"""The zoo models' delegated subgraphs on the virtual Ethos-U55, U65 and U85: bit-exact against
the TOSA reference model (mv2 is covered by test_delegate_e2e.py).

Each model is quantized once (one calibration sample: the checks compare two executions of
the same int8 graph, so calibration quality does not matter; the quantizer is the same for
every target) and partitioned, lowered and compiled by Vela for each of ethos-u55-128,
ethos-u55-64, ethos-u65-256, ethos-u85-128, ethos-u85-256 and ethos-u85-512. Two checks per
model and target:

* every delegate payload, run through the EthosUBackend delegate on the virtual NPU
  (``ethos_u_run_payload``) on random int8 inputs, equals ``TosaSubgraph.run_reference``
  (Arm's TOSA reference model on the graph Kiln lowered) bit for bit;
* the whole ``.pte`` runs on Kiln's runtime with its delegates on the virtual NPU and
  agrees with the program evaluated as PyTorch for the CPU part + the TOSA reference for
  the delegates (the way kiln.export.evaluate does it). The delegates are exact (first
  check), so only the CPU kernels (float layer norm, softmax, requantization) may differ
  from PyTorch's: at most one output LSB.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch

import kiln
import kiln.models
from kiln import _runtime
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.runtime import Runtime

TARGETS = ["ethos-u55-128", "ethos-u55-64", "ethos-u65-256", "ethos-u85-128", "ethos-u85-256", "ethos-u85-512"]
MODELS = ["smallcnn", "resnet", "dscnn", "mlp", "autoencoder", "mv3", "transformer"]
_NUMPY = {"int8": np.int8, "int16": np.int16, "int32": np.int32}


@dataclass
class Compiled:
    quantized: Any  # the quantized ExportedProgram
    inputs: tuple[torch.Tensor, ...]
    program_bytes: bytes
    report: Any  # kiln.export.delegate.CompileReport


@pytest.fixture(scope="module")
def zoo() -> dict[Any, Any]:
    """name -> (quantized model, inputs) and (name, target) -> Compiled; filled on first use."""
    return {}


def _compiled(cache: dict[Any, Any], name: str, target: str) -> Compiled:
    if name not in cache:
        logging.getLogger("torchao").setLevel(logging.ERROR)
        model, inputs = kiln.models.get(name)
        inputs = tuple(inputs)
        quantizer = EthosUQuantizer(EthosUCompileSpec(TARGETS[0]))
        cache[name] = (kiln.quantize(model.eval(), inputs, quantizer, [inputs], progress=False), inputs)
    if (name, target) not in cache:
        quantized, inputs = cache[name]
        program = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
        report = program.compile_report
        assert report is not None and report.delegates, f"{name}: nothing was delegated for {target}"
        cache[name, target] = Compiled(quantized, inputs, program.to_bytes(), report)
    return cache[name, target]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", MODELS)
def test_zoo_delegates_are_bit_exact(zoo: dict[Any, Any], name: str, target: str) -> None:
    compiled = _compiled(zoo, name, target)
    for delegate in compiled.report.delegates:
        pre = delegate.preprocessed
        specs = [(k, bytes(v)) for k, v in pre.compile_specs]
        for seed in range(2):
            rng = np.random.default_rng(seed)
            inputs = [rng.integers(-128, 128, size=io.shape).astype(_NUMPY[io.dtype]) for io in pre.tosa.inputs]
            outputs = [np.zeros(io.shape, dtype=_NUMPY[io.dtype]) for io in pre.tosa.outputs]
            _runtime.ethos_u_run_payload(pre.blob, specs, inputs, outputs)
            for k, (got, expected) in enumerate(zip(outputs, pre.tosa.run_reference(inputs))):
                differ = int(np.count_nonzero(got != expected.reshape(got.shape)))
                assert differ == 0, (
                    f"{name} {target} {delegate.name} output {k}, seed {seed}: {differ} of {expected.size} "
                    "elements differ from the TOSA reference")


def _cpu_plus_reference(compiled: Compiled) -> tuple[list[np.ndarray], list[Any]]:
    """The delegated graph in PyTorch, each delegate answered by its TOSA reference model;
    and each output's quantization step (None if not dequantized)."""
    from kiln.export import evaluate
    from kiln.passes.delegation import copy_graph_module, duplicate_shared_dequantize

    arguments = evaluate._placeholder_arguments(compiled.quantized, compiled.inputs)
    references = {info.name: info.preprocessed.tosa for info in compiled.report.delegates}
    reference_graph = copy_graph_module(compiled.quantized)
    duplicate_shared_dequantize(reference_graph.graph)
    with torch.no_grad(), evaluate._native_output_silenced():
        outputs = evaluate._Recorder(compiled.report.graph_module, set(), references).run(*arguments)
    return ([t.detach().numpy() for t in evaluate._as_list(outputs)],
            evaluate.output_lsb(reference_graph.graph))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", MODELS)
def test_zoo_program_runs_on_the_virtual_npu(zoo: dict[Any, Any], name: str, target: str) -> None:
    compiled = _compiled(zoo, name, target)
    method = Runtime().load_program(compiled.program_bytes).load_method("forward")
    got = method.execute([x.numpy() for x in compiled.inputs])
    expected, steps = _cpu_plus_reference(compiled)
    assert len(got) == len(expected)
    for k, (g, e, step) in enumerate(zip(got, expected, steps)):
        g = np.asarray(g)
        assert g.shape == e.shape, f"{name} output {k}"
        assert np.all(np.isfinite(g)), f"{name} output {k} has non-finite values"
        assert step is not None, f"{name} output {k} is not a dequantized int8 tensor"
        worst = float(np.max(np.abs(g.astype(np.float64) - e.astype(np.float64)))) / step
        assert worst <= 1.0 + 1e-6, f"{name} output {k}: {worst:.2f} LSB from CPU + TOSA reference"


def test_vela_lut_past_shram_falls_back_and_the_vnpu_refuses_it(zoo: dict[Any, Any], vnpu_tools: Any) -> None:
    """Vela 5.2 compiles the transformer's first attention subgraph for ethos-u55-64 with its
    lookup table DMA-ed to SHRAM 0x4000, one past the end of that NPU's 16 KiB (the TABLE
    then reads a slot that was never loaded). Vela prints "Error: Address out of bounds" and
    returns the stream anyway. Kiln's compile treats the diagnostic as a rejection (the
    subgraph is tried again in parts, with the reason in the report), and the virtual NPU,
    given the stream regardless, stops with a named error instead of computing garbage."""
    from kiln.backends.arm.vnpu import run_raw
    from kiln.runtime.errors import KilnRuntimeError

    splits = [s for s in _compiled(zoo, "transformer", "ethos-u55-64").report.partition_report.splits
              if "Vela reported an error" in s]
    assert splits and all("shram" in s for s in splits)
    first = _compiled(zoo, "transformer", "ethos-u55-128").report.delegates[0].preprocessed.tosa
    raw = vnpu_tools.compile_with_vela(first.flatbuffer, "ethos-u55-64")
    inputs = [np.zeros(io.tosa_shape, np.int8) for io in first.inputs]
    with pytest.raises(KilnRuntimeError, match="NpuRegionOutOfBounds"):
        run_raw(raw, inputs)
