"""A Wav2Letter-style speech model (1-D convolutions over 39 audio features, a 250 -> 2000
convolution with a kernel of 32 over time, 1x1 convolutions to 29 characters; written here,
random seeded weights, BatchNorm statistics settled on the calibration data) compiled by
Kiln for ethos-u85-256 and run on the host's virtual NPU through the EthosUBackend delegate.

Its 2000x32x250 convolution decodes 16 Mi weights: ~72 MB of virtual NPU work memory,
which the old fixed 12 MiB + 96 KiB refused at run time (OutOfResources). The work memory
is now sized from the program when the delegate loads. Checks:
* the delegate's stream needs more than the old fixed work memory (this is the case that
  failed) and the virtual NPU, given what vnpu_work_memory_bytes says, uses no more;
* every delegate payload equals the TOSA reference model bit for bit (EthosUBackend on the
  host's virtual NPU, register path);
* the whole program runs on Kiln's runtime and agrees with PyTorch for its CPU part plus
  the TOSA reference for its delegates, within one output LSB (the CPU's log-softmax), and
  through kiln-run;
* the memory manifest gives the firmware exactly that work memory."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import kiln
from kiln import _runtime
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.runtime import Runtime

_OLD_FIXED_WORK_MEMORY = 96 * 1024 + 12 * 1024 * 1024
_NUMPY = {"int8": np.int8, "int16": np.int16, "int32": np.int32}


class Wav2LetterStyle(torch.nn.Module):
    """Wav2Letter's layer structure (Collobert et al.) at its real widths, fewer middle layers."""

    def __init__(self, features: int = 39, classes: int = 29) -> None:
        super().__init__()

        def block(cin: int, cout: int, kernel: int, stride: int = 1) -> torch.nn.Sequential:
            return torch.nn.Sequential(torch.nn.Conv1d(cin, cout, kernel, stride, padding=kernel // 2),
                                       torch.nn.BatchNorm1d(cout), torch.nn.ReLU())

        self.layers = torch.nn.Sequential(
            block(features, 250, 48, 2), block(250, 250, 7), block(250, 250, 7),
            block(250, 2000, 32), block(2000, 2000, 1), torch.nn.Conv1d(2000, classes, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.layers(x), dim=1)


def _model_and_samples() -> tuple[torch.nn.Module, list[tuple[torch.Tensor]]]:
    torch.manual_seed(0)
    model = Wav2LetterStyle()
    samples = [(torch.randn(1, 39, 64),) for _ in range(4)]
    # Settle BatchNorm on the data (FACTS: default statistics make activations vanish).
    model.train()
    with torch.no_grad():
        for (x,) in samples:
            model(x)
    return model.eval(), samples


@pytest.fixture(scope="module")
def compiled() -> Any:
    logging.getLogger("torchao").setLevel(logging.ERROR)
    model, samples = _model_and_samples()
    target = "ethos-u85-256"
    quantized = kiln.quantize(model, samples[0], EthosUQuantizer(EthosUCompileSpec(target)), samples, progress=False)
    program = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    assert program.compile_report is not None and program.compile_report.delegates
    return quantized, samples[0], program.to_bytes(), program.compile_report, target


def test_stream_needs_more_than_the_old_fixed_work_memory(compiled: Any) -> None:
    from kiln.backends.arm.vnpu import run_raw_with_counters

    _, _, _, report, target = compiled
    largest = 0
    for delegate in report.delegates:
        pre = delegate.preprocessed
        needed = _runtime.vnpu_work_memory_bytes(pre.vela.command_stream, target)
        assert pre.report.npu_work_memory_bytes == needed  # known at compile time
        inputs = [np.zeros(io.tosa_shape, _NUMPY[io.dtype]) for io in pre.tosa.inputs]
        run = run_raw_with_counters(pre.vela, inputs)
        assert run.counters["work_memory_bytes"] == needed
        assert 0 < run.counters["work_memory_used"] <= needed
        largest = max(largest, needed)
    assert largest > _OLD_FIXED_WORK_MEMORY


def test_delegates_equal_the_tosa_reference(compiled: Any) -> None:
    _, _, _, report, _ = compiled
    for delegate in report.delegates:
        pre = delegate.preprocessed
        specs = [(k, bytes(v)) for k, v in pre.compile_specs]
        rng = np.random.default_rng(1)
        inputs = [rng.integers(-128, 128, size=io.shape).astype(_NUMPY[io.dtype]) for io in pre.tosa.inputs]
        outputs = [np.zeros(io.shape, dtype=_NUMPY[io.dtype]) for io in pre.tosa.outputs]
        _runtime.ethos_u_run_payload(pre.blob, specs, inputs, outputs)
        for k, (got, expected) in enumerate(zip(outputs, pre.tosa.run_reference(inputs))):
            differ = int(np.count_nonzero(got != expected.reshape(got.shape)))
            assert differ == 0, f"{delegate.name} output {k}: {differ} of {expected.size} differ from the TOSA reference"


def test_program_runs_on_the_host_runtime(compiled: Any) -> None:
    from kiln.export import evaluate
    from kiln.passes.delegation import copy_graph_module, duplicate_shared_dequantize

    quantized, inputs, program_bytes, report, _ = compiled
    got = Runtime().load_program(program_bytes).load_method("forward").execute([x.numpy() for x in inputs])
    arguments = evaluate._placeholder_arguments(quantized, inputs)
    references = {info.name: info.preprocessed.tosa for info in report.delegates}
    reference_graph = copy_graph_module(quantized)
    duplicate_shared_dequantize(reference_graph.graph)
    with torch.no_grad(), evaluate._native_output_silenced():
        expected = evaluate._Recorder(report.graph_module, set(), references).run(*arguments)
    expected = [t.detach().numpy() for t in evaluate._as_list(expected)]
    steps = evaluate.output_lsb(reference_graph.graph)
    assert len(got) == len(expected) == 1
    g, e = np.asarray(got[0]), expected[0]
    assert g.shape == e.shape == (1, 29, 34)
    assert np.all(np.isfinite(g))
    step = steps[0] if steps[0] is not None else float(np.max(np.abs(e))) / 127
    worst = float(np.max(np.abs(g.astype(np.float64) - e.astype(np.float64)))) / step
    assert worst <= 1.0 + 1e-6, f"{worst:.2f} LSB from CPU + TOSA reference"


def test_kiln_run_runs_it(compiled: Any, tmp_path: Path) -> None:
    """The host runner loads it through the same delegate (its NPU grows to the stream)."""
    _, inputs, program_bytes, _, _ = compiled
    pte = tmp_path / "wav2letter_u85.pte"
    pte.write_bytes(program_bytes)
    np.save(tmp_path / "x.npy", inputs[0].numpy())
    result = subprocess.run([sys.executable, "-m", "kiln.cli.run", str(pte), "--input", str(tmp_path / "x.npy"),
                             "--output-dir", str(tmp_path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    (expected,) = Runtime().load_program(program_bytes).load_method("forward").execute([inputs[0].numpy()])
    np.testing.assert_array_equal(np.load(tmp_path / "output_0.npy"), expected)


def test_memory_manifest_sizes_the_firmware_work_memory(compiled: Any, tmp_path: Path) -> None:
    """The firmware's virtual NPU gets the manifest's npu_work_memory pool: what the largest
    stream needs on the program's target, placed on the board (the firmware build checks
    the fit)."""
    from kiln.memory.manifest import ethos_u_command_stream, write_manifest

    _, _, program_bytes, report, target = compiled
    pte = tmp_path / "wav2letter_u85.pte"
    pte.write_bytes(program_bytes)
    needed = max(_runtime.vnpu_work_memory_bytes(ethos_u_command_stream(d.preprocessed.blob), target)
                 for d in report.delegates)
    manifest = write_manifest(pte, tmp_path)
    assert manifest.npu_work_memory_bytes == needed > _OLD_FIXED_WORK_MEMORY
    assert manifest.pool("npu_work_memory").bytes == needed
    header = (tmp_path / "wav2letter_u85_memory.h").read_text()
    assert f"#define KILN_MANIFEST_NPU_WORK_MEMORY_BYTES {needed}" in header
