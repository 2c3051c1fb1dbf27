"""ExecuTorch's a16w8 Ethos-U programs (16-bit activations, int8 weights) run on Kiln
bit-exactly, and Kiln's a16w8 programs follow their .pte conventions.

ExecuTorch 1.5.1's Arm flow with its 16-bit activation config
(``get_symmetric_a16w8_quantization_config``, what ``aot_arm_compiler`` uses for A16W8)
compiles a small CNN (conv, depthwise conv, residual add, ReLU, average pooling, linear) and an
MLP with 16-bit sigmoid and tanh tables for ethos-u55-128 and ethos-u85-256
(benchmarks/executorch_arm_programs.py --a16w8, in its venv). Kiln runs

* every delegate's payload on the virtual NPU against Arm's TOSA reference model on the TOSA
  graph ExecuTorch lowered, on random inputs over the whole int16 range: bit-exact;
* the whole program (int16 quantize, the delegate, int16 dequantize on the CPU) on its
  runtime, against ExecuTorch's quantized PyTorch model, in output steps; the CNN's program
  also with ``cortex_m::`` quantize/dequantize on int16 (what ``aot_arm_compiler`` writes for
  Ethos-U targets): the same outputs.

Kiln's own a16w8 program for the CNN, read by ExecuTorch's deserializer and runtime, has the
same plan as ExecuTorch's (operators, their int16 dtype and range arguments, the delegate's
int16 IO) and the same compile specs but for ExecuTorch's debug_artifact_path and Kiln's
io_layout. Each ExecuTorch program is compiled once per session (module-scope cache).
"""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .executorch_programs import (
    A16W8_MODELS,
    TARGETS,
    delegate_mismatches,
    program_cache,
    program_distance,
    tosa_io,
)

pytestmark = [pytest.mark.executorch, pytest.mark.slow]

# Measured 1 step (CNN) and 0 (MLP) from ExecuTorch's quantized model on both targets.
_MAX_PROGRAM_LSB = 3.0
_READER = Path(__file__).with_name("executorch_read_conventions.py")

# ExecuTorch lowers the MLP's sigmoid and tanh to int16 TOSA TABLEs, which Vela compiles to
# 16-bit interpolating lookups (Ethos-U55 table activation on an int16 OFM, Ethos-U85
# LUT_S16_S16); the virtual NPU models both.
MODEL_CASES = sorted(A16W8_MODELS)


@pytest.fixture(scope="module")
def et_programs(executorch_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return program_cache(executorch_python, tmp_path_factory, a16w8=True)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", MODEL_CASES)
def test_executorch_a16w8_delegates_are_bit_exact_on_the_virtual_npu(et_programs: Any, name: str,
                                                                      target: str) -> None:
    program = et_programs(name, target)
    assert program.tosa, f"{name} {target}: ExecuTorch delegated nothing"
    for path in program.tosa:  # ExecuTorch's a16w8 delegates take and give int16
        inputs, outputs = tosa_io(path.read_bytes())
        assert {dtype for _, dtype in (*inputs, *outputs)} == {np.int16}, f"{path.name}: {inputs} -> {outputs}"
    differing = delegate_mismatches(program)
    assert differing == [0] * len(differing), f"{name} {target}: elements differing per delegate {differing}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", MODEL_CASES)
def test_executorch_a16w8_program_runs_on_kiln_near_its_quantized_model(et_programs: Any, name: str,
                                                                         target: str) -> None:
    program = et_programs(name, target)
    distances = program_distance(program)
    assert distances, f"{name} {target}: no outputs"
    for k, lsb in enumerate(distances):
        assert np.isfinite(lsb) and lsb <= _MAX_PROGRAM_LSB, (
            f"{name} {target} output {k}: {lsb:.1f} steps from ExecuTorch's quantized model")


@pytest.mark.parametrize("target", TARGETS)
def test_executorch_a16w8_program_with_cortex_m_qdq_gives_the_same_outputs(et_programs: Any, target: str) -> None:
    from kiln.program import Program
    from kiln.runtime import Runtime

    program = et_programs("a16w8_cnn", target)
    operators = Program.load(program.pte_cortex_m).operators
    assert {"cortex_m::quantize_per_tensor.out", "cortex_m::dequantize_per_tensor.out"} <= set(operators), operators
    outputs = []
    for path in (program.pte, program.pte_cortex_m):
        method = Runtime().load_program(path).load_method("forward")
        outputs.append([np.asarray(o) for o in method.execute([x.numpy() for x in program.inputs])])
    for plain, cortex_m in zip(*outputs):
        np.testing.assert_array_equal(cortex_m, plain)


def _read_with_executorch(python: Path, path: Path) -> dict[str, Any]:
    result = subprocess.run([str(python), str(_READER), str(path)], capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("target", TARGETS)
def test_kiln_a16w8_program_follows_executorch_conventions(et_programs: Any, executorch_python: Path,
                                                           tmp_path: Path, target: str) -> None:
    import kiln
    from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
    from kiln.backends.arm.partitioner import EthosUPartitioner

    logging.getLogger("torchao").setLevel(logging.ERROR)
    theirs = _read_with_executorch(executorch_python, et_programs("a16w8_cnn", target).pte)
    # ExecuTorch's default system config and memory mode (Kiln's default memory mode differs
    # on the Ethos-U65 and U85: kiln/targets.py).
    flags = dict(flag.split("=", 1) for flag in theirs["compile_specs"][0]["compile_flags"].split())
    spec = EthosUCompileSpec(target, system_config=flags["--system-config"], memory_mode=flags["--memory-mode"])
    model, inputs, samples = A16W8_MODELS["a16w8_cnn"](False)
    quantized = kiln.quantize(model, inputs, EthosUQuantizer(spec, activations="int16"), samples, progress=False)
    program = kiln.export(quantized, partitioner=EthosUPartitioner(spec))
    ours = _read_with_executorch(executorch_python, program.save(tmp_path / "kiln_a16w8.pte"))

    # ExecuTorch's runtime loads both and stops at the same place: no EthosUBackend on the host.
    assert ours["methods"] == theirs["methods"] == ["forward"]
    assert ours["load_error"] == theirs["load_error"] != ""
    assert (ours["inputs"], ours["outputs"]) == (theirs["inputs"], theirs["outputs"])
    # The same plan: int16 quantize (range -32767..32767), the delegate on int16, dequantize.
    assert ours["plan"] == theirs["plan"]
    assert any(step[0] == "delegate:EthosUBackend" for step in ours["plan"])
    # The same compile specs (ExecuTorch adds where it dumped the TOSA graphs, Kiln the layout
    # of its delegate IO).
    [our_specs], [their_specs] = ours["compile_specs"], theirs["compile_specs"]
    assert our_specs.pop("io_layout") == "nhwc" and their_specs.pop("debug_artifact_path")
    assert our_specs == their_specs
