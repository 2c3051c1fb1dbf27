"""EthosUBackend delegate end to end: Kiln-compiled delegated programs (Ethos-U55, U65 and
U85 targets) run on the host through the virtual NPU, and the delegate's output equals the
TOSA reference model's.

The reference is independent of the runtime under test: the TOSA graph Kiln lowered
(``TosaSubgraph.run_reference``, Arm's reference model). Inputs are chosen on the input's
quantization grid, so that quantizing them on the CPU is exact and "program output ==
dequantize(TOSA reference output)" can be asserted bit for bit.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
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

_NUMPY = {"int8": np.int8, "int16": np.int16, "int32": np.int32}


class AllOnNpu(torch.nn.Module):
    """Convolution, depthwise convolution, pooling: every node delegates, so the program's
    output is the dequantized delegate output. The output, [1, 6, 6, 6], reads the same as
    NCHW and NHWC: the runtime must take the layout from the program (io_layout)."""

    def __init__(self, residual: bool = False) -> None:
        super().__init__()
        self.residual = residual
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pool = torch.nn.MaxPool2d(2)
        self.project = torch.nn.Conv2d(8, 6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x))
        z = torch.relu(self.depthwise(y))
        if self.residual:
            z = z + y
        return self.project(self.pool(z))


@dataclass
class Delegated:
    """A delegated program and what produced it."""

    program_bytes: bytes
    report: Any  # kiln.export.delegate.CompileReport
    inputs: tuple[torch.Tensor, ...]


def _export(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], target: str, nhwc_io: bool = False) -> Delegated:
    spec = EthosUCompileSpec(target)
    generator = torch.Generator().manual_seed(1)
    samples = [inputs] + [tuple(torch.randn(x.shape, generator=generator) for x in inputs) for _ in range(3)]
    quantized = kiln.quantize(model, inputs, EthosUQuantizer(spec), samples, progress=False)
    program = kiln.export(quantized, inputs, partitioner=EthosUPartitioner(spec, nhwc_io=nhwc_io))
    assert program.compile_report is not None and program.compile_report.delegates, "nothing was delegated"
    return Delegated(program.to_bytes(), program.compile_report, inputs)


@pytest.fixture(scope="module", params=["ethos-u55-128", "ethos-u65-256", "ethos-u85-128", "ethos-u85-256"])
def all_on_npu(request: pytest.FixtureRequest) -> Delegated:
    torch.manual_seed(0)
    model = AllOnNpu().eval()
    return _export(model, (torch.randn(1, 3, 12, 12),), request.param)


@pytest.fixture(scope="module")
def smallcnn() -> Delegated:
    import kiln.models

    model, inputs = kiln.models.get("smallcnn")
    return _export(model, inputs, "ethos-u55-128")


def _on_grid(shape: tuple[int, ...], scale: float, zero_point: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(int8 values, the float32 values that quantize to them exactly)."""
    q = np.random.default_rng(seed).integers(-128, 128, size=shape).astype(np.int8)
    x = (q.astype(np.float32) - np.float32(zero_point)) * np.float32(scale)
    return q, x


def _dequantize(q: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    # The same float32 arithmetic as the dequantize kernel: (q - zp) * scale.
    return (q.astype(np.float32) - np.float32(zero_point)) * np.float32(scale)


@pytest.mark.parametrize("seed", [0, 1])
def test_program_output_is_the_dequantized_tosa_reference(all_on_npu: Delegated, seed: int) -> None:
    (delegate,) = all_on_npu.report.delegates
    tosa = delegate.preprocessed.tosa
    (tin,), (tout,) = tosa.inputs, tosa.outputs
    q, x = _on_grid(tin.shape, tin.scale, tin.zero_point, seed)
    (got,) = Runtime().load_program(all_on_npu.program_bytes).load_method("forward").execute([x])
    (reference,) = tosa.run_reference([q])
    expected = _dequantize(reference, tout.scale, tout.zero_point)
    assert got.shape == expected.shape
    mismatched = int(np.count_nonzero(np.asarray(got) != expected))
    assert mismatched == 0, f"{mismatched} of {expected.size} outputs differ from the TOSA reference"
    counters = _runtime.ethos_u_counters()
    assert counters["operations"] >= 3 and counters["macs"] > 0


def test_payloads_run_bit_exact_on_random_int8_inputs(all_on_npu: Delegated, smallcnn: Delegated) -> None:
    for delegated in (all_on_npu, smallcnn):
        for delegate in delegated.report.delegates:
            pre = delegate.preprocessed
            for seed in range(3):
                inputs = [np.random.default_rng(seed).integers(-128, 128, size=io.shape).astype(_NUMPY[io.dtype])
                          for io in pre.tosa.inputs]
                outputs = [np.zeros(io.shape, dtype=_NUMPY[io.dtype]) for io in pre.tosa.outputs]
                _runtime.ethos_u_run_payload(pre.blob, [(k, bytes(v)) for k, v in pre.compile_specs], inputs, outputs)
                for got, expected in zip(outputs, pre.tosa.run_reference(inputs)):
                    np.testing.assert_array_equal(got, expected, err_msg=f"{delegate.name}, seed {seed}")


def test_method_allocator_size_includes_the_npu_arena(smallcnn: Delegated) -> None:
    program = Runtime().load_program(smallcnn.program_bytes)
    meta = program.method_meta("forward")
    (delegate,) = smallcnn.report.delegates
    assert meta.method_allocator_size >= delegate.preprocessed.vela.scratch_size
    # The method loads in exactly that much memory (the runtime sizes it from MethodMeta).
    program.load_method("forward").execute(list(smallcnn.inputs))


def test_residual_add_runs_bit_exact() -> None:
    # Vela fuses the add's RESCALEs into an ADD that scales one operand (OPA_32/OPB_32); the
    # other operand is shifted left by 19 bits, not multiplied by OPB_SCALE.
    torch.manual_seed(0)
    delegated = _export(AllOnNpu(residual=True).eval(), (torch.randn(1, 3, 12, 12),), "ethos-u55-128")
    (delegate,) = delegated.report.delegates
    pre = delegate.preprocessed
    inputs = [np.random.default_rng(0).integers(-128, 128, size=io.shape).astype(np.int8) for io in pre.tosa.inputs]
    outputs = [np.zeros(io.shape, dtype=np.int8) for io in pre.tosa.outputs]
    _runtime.ethos_u_run_payload(pre.blob, [(k, bytes(v)) for k, v in pre.compile_specs], inputs, outputs)
    np.testing.assert_array_equal(outputs[0], pre.tosa.run_reference(inputs)[0])


def test_kiln_run_executes_a_delegated_program(smallcnn: Delegated, tmp_path: Path) -> None:
    pte = tmp_path / "smallcnn_u55.pte"
    pte.write_bytes(smallcnn.program_bytes)
    x = smallcnn.inputs[0].numpy()
    np.save(tmp_path / "x.npy", x)
    result = subprocess.run(
        [sys.executable, "-m", "kiln.cli.run", str(pte), "--input", str(tmp_path / "x.npy"),
         "--output-dir", str(tmp_path)],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    # The driver identified the NPU from its registers and read its PMU.
    assert "ethos-u NPU (from its ID/CONFIG registers): Ethos-U55 with 128 MACs/cycle" in result.stdout
    pmu = re.search(r"ethos-u PMU \(last execute, 1 delegate call\(s\)\): (\d+) cycles, (\d+) active cycles, "
                    r"(\d+) AXI read beats, (\d+) AXI write beats", result.stdout)
    assert pmu, result.stdout
    cycles, active, read_beats, write_beats = (int(v) for v in pmu.groups())
    assert 0 < active < cycles and read_beats > 0 and write_beats > 0
    got = np.load(tmp_path / "output_0.npy")
    (expected,) = Runtime().load_program(smallcnn.program_bytes).load_method("forward").execute([x])
    np.testing.assert_array_equal(got, expected)  # the same runtime through both hooks


def test_malformed_payload_is_a_named_error(smallcnn: Delegated) -> None:
    (delegate,) = smallcnn.report.delegates
    pre = delegate.preprocessed
    inputs = [np.zeros(io.shape, dtype=_NUMPY[io.dtype]) for io in pre.tosa.inputs]
    outputs = [np.zeros(io.shape, dtype=_NUMPY[io.dtype]) for io in pre.tosa.outputs]
    with pytest.raises(kiln.runtime.KilnRuntimeError) as error:
        _runtime.ethos_u_run_payload(pre.blob[: len(pre.blob) // 2], [], inputs, outputs)
    assert error.value.error_name == "DelegatePayloadTruncated"


def test_kiln_aot_and_kiln_run_on_an_ethos_u85_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's commands, from a folder outside the checkout with relative paths: kiln-aot
    compiles smallcnn for ethos-u85-256 into a folder that does not exist yet, kiln-run runs
    it on the virtual NPU, and the output equals the Python runtime's."""
    monkeypatch.chdir(tmp_path)
    compile_result = subprocess.run(
        [sys.executable, "-m", "kiln.cli.aot", "--model_name", "smallcnn", "--delegate", "--quantize",
         "--target", "ethos-u85-256", "--calibration_samples", "2", "--output", "out/smallcnn_u85.pte"],
        capture_output=True, text=True, check=False,
    )
    assert compile_result.returncode == 0, compile_result.stderr[-2000:]
    program_bytes = Path("out/smallcnn_u85.pte").read_bytes()
    x = np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save("x.npy", x)
    result = subprocess.run(
        [sys.executable, "-m", "kiln.cli.run", "out/smallcnn_u85.pte", "--input", "x.npy", "--output-dir", "results"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "ethos-u NPU (from its ID/CONFIG registers): Ethos-U85 with 256 MACs/cycle" in result.stdout
    assert "architecture 2.0.0" in result.stdout
    (expected,) = Runtime().load_program(program_bytes).load_method("forward").execute([x])
    np.testing.assert_array_equal(np.load("results/output_0.npy"), expected)
    counters = _runtime.ethos_u_counters()
    assert counters["operations"] > 0
    # The PMU's counts through the register-level driver: the device's estimate, at least one
    # cycle per operation and the bytes the model moved, in 16-byte beats.
    assert counters["cycles"] > counters["active_cycles"] >= counters["operations"]
    moved_out = sum(counters["bytes_written"][:8])
    assert counters["axi_write_beats"] >= moved_out // 16
    identity = _runtime.ethos_u_npu_identity()
    assert identity["product"] == "Ethos-U85" and identity["macs_per_cycle"] == 256
    assert identity["config"] == 0x20000118 and identity["architecture"] == "2.0.0"


@pytest.fixture(scope="module", params=["ethos-u55-128", "ethos-u85-256"])
def mv2(request: pytest.FixtureRequest) -> Delegated:
    import kiln.models

    model, inputs = kiln.models.get("mv2")
    return _export(model.eval(), tuple(inputs), request.param)


@pytest.mark.slow
def test_mv2_runs_bit_exact(mv2: Delegated) -> None:
    """MobileNetV2's delegate (every layer up to the 1280 features, residual adds included)
    equals the TOSA reference model bit for bit on random int8 inputs."""
    (delegate,) = mv2.report.delegates
    pre = delegate.preprocessed
    for seed in range(2):
        inputs = [np.random.default_rng(seed).integers(-128, 128, size=io.shape).astype(_NUMPY[io.dtype])
                  for io in pre.tosa.inputs]
        outputs = [np.zeros(io.shape, dtype=_NUMPY[io.dtype]) for io in pre.tosa.outputs]
        _runtime.ethos_u_run_payload(pre.blob, [(k, bytes(v)) for k, v in pre.compile_specs], inputs, outputs)
        for got, expected in zip(outputs, pre.tosa.run_reference(inputs)):
            differ = int(np.count_nonzero(got != expected))
            assert differ == 0, f"seed {seed}: {differ} of {expected.size} mv2 outputs differ from the TOSA reference"


@pytest.mark.slow
def test_mv2_program_output_is_the_dequantized_tosa_reference(mv2: Delegated) -> None:
    """The whole network is one delegate (classifier included), so the program's output is
    dequantize(TOSA reference output), bit for bit."""
    (delegate,) = mv2.report.delegates
    tosa = delegate.preprocessed.tosa
    (tin,), (tout,) = tosa.inputs, tosa.outputs
    q, x = _on_grid(tin.shape, tin.scale, tin.zero_point, 1)
    (got,) = Runtime().load_program(mv2.program_bytes).load_method("forward").execute([x])
    (reference,) = tosa.run_reference([q])
    expected = _dequantize(reference, tout.scale, tout.zero_point)
    assert got.shape == expected.shape
    mismatched = int(np.count_nonzero(np.asarray(got) != expected))
    assert mismatched == 0, f"{mismatched} of {expected.size} mv2 outputs differ from the TOSA reference"


def test_npu_operations_carry_the_devices_cycle_estimate(all_on_npu: Delegated, tmp_path: Path) -> None:
    """Two channels, one estimate: each NPU operation's cycles in the ETDump metadata and the
    op records (the device's side channel) add up to NPU_ACTIVE, which the register-level
    driver read from the PMU; the Inspector shows them per operation."""
    from kiln.devtools import Inspector, record_etdump
    from kiln.program import Program

    method = Runtime().load_program(all_on_npu.program_bytes).load_method("forward")
    _runtime.ethos_u_record_ops(256)
    try:
        with record_etdump(method) as recording:
            method.execute(list(all_on_npu.inputs))
        records = _runtime.ethos_u_op_records()
    finally:
        _runtime.ethos_u_record_ops(0)
    counters = _runtime.ethos_u_counters()
    events = [e for e in recording.etdump.runs[0].profile_events if e.is_delegate_operation]
    assert len(events) == len(records) == counters["operations"] + counters["dma_transfers"]
    cycles = [int(e.counters["cycles"]) for e in events]
    assert all(c >= 32 for c in cycles)  # every operation pays its setup
    assert cycles == [r["cycles"] for r in records]
    assert sum(cycles) == counters["active_cycles"] < counters["cycles"]
    assert {k: v for k, v in method.npu_counters().items() if k != "delegate_calls"} == \
        {k: v for k, v in counters.items() if k != "delegate_calls"}
    path = tmp_path / "program.pte"
    path.write_bytes(all_on_npu.program_bytes)
    rows = [row for row in Inspector(recording.etdump, Program.load(path)).rows if row.is_npu_operation]
    assert [row.npu_cycles for row in rows] == cycles
