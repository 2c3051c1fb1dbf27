"""ExecuTorch-produced Ethos-U programs run on Kiln's runtime through the virtual NPU.

ExecuTorch 1.5.1's Arm flow (``aot_arm_compiler --delegate --quantize``) compiles a small
CNN in its own venv; Kiln loads the .pte, runs it, and its output must equal the
dequantized output of the TOSA reference model on the TOSA graph ExecuTorch lowered (its
``--intermediates``). ExecuTorch's own host runtime cannot run these programs.

The second model is the zoo's smallcnn (batch norm, max pooling, a mean over H and W): its
Ethos-U55 stream, from ExecuTorch's Vela 5.1, writes an NHWC map with a C stride other than
the element size, which the NPU ignores (the virtual NPU once refused it). The third is a
softmax over 197 tokens, whose row maximum Vela emits as one 1x197 max pooling, as in
ExecuTorch's DeiT-tiny (the virtual NPU once refused kernels over 64 wide).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tosa_reference_model

from kiln import _runtime
from kiln.program import Program
from kiln.runtime import Runtime

pytestmark = [pytest.mark.executorch, pytest.mark.slow]

_MODEL_FILE = '''
import torch


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.fc(self.pool(x).flatten(1))


torch.manual_seed(0)
ModelUnderTest = SmallCnn().eval()
ModelInputs = (torch.randn(1, 3, 16, 16),)
'''

_BATCH_NORM_MODEL_FILE = '''
import torch


class SmallCnnBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1, bias=False), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1, bias=False), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
        )
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))


torch.manual_seed(0)
ModelUnderTest = SmallCnnBn().eval()
ModelInputs = (torch.randn(1, 3, 32, 32),)
'''

# Attention weights over a ViT's 197 tokens: ExecuTorch's softmax takes the row maximum
# (REDUCE_MAX), which Vela 5.1 emits as one 1x197 max pooling (the virtual NPU once
# refused kernels over 64 wide).
_TOKEN_POOL_MODEL_FILE = '''
import torch


class TokenSoftmax(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.project = torch.nn.Linear(197, 197)

    def forward(self, scores):
        return torch.softmax(self.project(scores), dim=-1)


torch.manual_seed(0)
ModelUnderTest = TokenSoftmax().eval()
ModelInputs = (torch.randn(1, 8, 197),)
'''

#: model file, input shape
_MODELS = {"smallcnn": (_MODEL_FILE, (1, 3, 16, 16)), "smallcnn_bn": (_BATCH_NORM_MODEL_FILE, (1, 3, 32, 32)),
           "token_pool": (_TOKEN_POOL_MODEL_FILE, (1, 8, 197))}


@dataclass
class EtProgram:
    name: str
    target: str
    pte: Path
    tosa: bytes
    input_shape: tuple[int, ...]
    vela_npz: Path


@pytest.fixture(scope="module", params=[("smallcnn", "ethos-u55-128"), ("smallcnn", "ethos-u65-256"),
                                        ("smallcnn", "ethos-u85-128"), ("smallcnn", "ethos-u85-256"),
                                        ("smallcnn_bn", "ethos-u55-128"), ("token_pool", "ethos-u55-128"),
                                        ("token_pool", "ethos-u85-256")], ids="-".join)
def et_program(request: pytest.FixtureRequest, executorch_python: Path, tmp_path_factory: pytest.TempPathFactory) -> EtProgram:
    probe = subprocess.run([str(executorch_python), "-c", "import ethosu.vela, tosa_serializer"],
                           capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("ExecuTorch's Arm flow needs ethos-u-vela==5.1.0 and tosa-tools==2026.5.0 in its venv "
                    "(pip install --no-deps)")
    name, target = request.param
    model_file, input_shape = _MODELS[name]
    folder = tmp_path_factory.mktemp(f"et_{name}_{target}")
    (folder / "smallcnn_et.py").write_text(model_file)
    result = subprocess.run(
        [str(executorch_python), "-m", "executorch.backends.arm.scripts.aot_arm_compiler",
         "--model_name=smallcnn_et.py", "--delegate", "--quantize", f"--target={target}",
         "--intermediates=inter", "--output=smallcnn_et.pte"],
        cwd=folder, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (tosa_file,) = (folder / "inter").glob("output_tag*.tosa")
    return EtProgram(name, target, folder / "smallcnn_et.pte", tosa_file.read_bytes(), input_shape,
                     folder / "inter" / "output" / "out_vela.npz")


def _quant_params(program: Program, instruction: int) -> tuple[float, int]:
    """(scale, zero point) of a quantize/dequantize kernel call: arguments 1 and 2."""
    plan = program.flatbuffer.executionPlan[0]
    args = plan.chains[0].instructions[instruction].instrArgs.args
    return float(plan.values[args[1]].val.doubleVal), int(plan.values[args[2]].val.intVal)


@pytest.mark.parametrize("seed", [0, 1])
def test_executorch_program_equals_dequantized_tosa_reference(et_program: EtProgram, seed: int) -> None:
    program = Program.load(et_program.pte)
    plan = program.flatbuffer.executionPlan[0]
    assert [bytes(d.id).decode() for d in plan.delegates] == ["EthosUBackend"]
    # ExecuTorch's program: quantize (CPU) -> delegate -> dequantize (CPU).
    in_scale, in_zp = _quant_params(program, 0)
    out_scale, out_zp = _quant_params(program, 2)
    q = np.random.default_rng(seed).integers(-128, 128, size=et_program.input_shape).astype(np.int8)
    x = (q.astype(np.float32) - np.float32(in_zp)) * np.float32(in_scale)
    (got,) = Runtime().load_program(et_program.pte).load_method("forward").execute([x])
    # ExecuTorch's TOSA graph keeps the program's NCHW layout at its boundary.
    outputs, status = tosa_reference_model.run(et_program.tosa, [q])
    assert status == tosa_reference_model.GraphStatus.TOSA_VALID
    reference = np.asarray(outputs[0]).view(np.int8).reshape(got.shape)
    expected = (reference.astype(np.float32) - np.float32(out_zp)) * np.float32(out_scale)
    np.testing.assert_array_equal(got, expected)
    assert _runtime.ethos_u_counters()["operations"] > 0


def test_executorch_token_softmax_stream_pools_197_wide(et_program: EtProgram) -> None:
    """The token softmax case exercises what it is for: Vela's stream sets a 197-wide kernel."""
    if et_program.name != "token_pool":
        pytest.skip("only the token softmax's stream has a kernel over 64")
    import struct

    stream = bytes(np.load(et_program.vela_npz)["cmd_data"])
    codes = _runtime.vnpu_command_codes(et_program.target)
    width = codes["NPU_SET_KERNEL_WIDTH_M1"][1]
    words = struct.unpack(f"<{len(stream) // 4}I", stream)
    widths, i = [], 0
    while i < len(words):
        if words[i] & 0x3FF == width and not words[i] & 0x4000:
            widths.append((words[i] >> 16) + 1)
        i += 2 if words[i] & 0x4000 else 1
    assert 197 in widths
