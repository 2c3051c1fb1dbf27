"""Kiln's XNNPACK programs for the tests: models, compiled once, and run once in ExecuTorch's runtime.

Shared by the test files of this folder (pytest's importlib mode: imported by path).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import kiln
import kiln.models
from kiln.backends.xnnpack import XnnpackPartitioner, XnnpackQuantizer

EXECUTORCH_RUNNER = Path(__file__).with_name("executorch_run_programs.py")
CALIBRATION_SAMPLES = 8


def numpy_input(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


class TwoBranches(nn.Module):
    """Elementwise ops between two computed tensors (a residual add, a gate, ...)."""

    def __init__(self, op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.left, self.right, self.op = nn.Conv2d(4, 8, 3, padding=1), nn.Conv2d(4, 8, 1), op

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(self.left(x), self.right(x))


class Lambda(nn.Module):
    def __init__(self, function: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.function = function

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.function(x)


class NormalizedConv(nn.Module):
    """A batch norm on its own (not after a convolution) with non-trivial statistics."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(4)
        self.norm.running_mean.uniform_(-1, 1)
        self.norm.running_var.uniform_(0.5, 2)
        self.norm.weight.data.uniform_(0.5, 1.5)
        self.norm.bias.data.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(x + 1.0))


IMAGE = (1, 4, 8, 8)
# name -> (model factory, input shape); each runs in fp32 and int8.
OP_MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]] = {
    "conv2d": (lambda: nn.Sequential(nn.Conv2d(4, 8, 3, padding=1)), IMAGE),
    "conv2d_strided_dilated": (lambda: nn.Sequential(nn.Conv2d(4, 8, 3, stride=2, padding=2, dilation=2,
                                                               bias=False)), IMAGE),
    "conv2d_grouped": (lambda: nn.Sequential(nn.Conv2d(4, 8, 3, groups=2)), IMAGE),
    "depthwise_conv2d": (lambda: nn.Sequential(nn.Conv2d(4, 4, 3, padding=1, groups=4), nn.ReLU()), IMAGE),
    "linear": (lambda: nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 4)), (3, 16)),
    "add": (lambda: TwoBranches(torch.add), IMAGE),
    "sub": (lambda: TwoBranches(torch.sub), IMAGE),
    "mul": (lambda: TwoBranches(torch.mul), IMAGE),
    "add_relu": (lambda: TwoBranches(lambda a, b: torch.relu(a + b)), IMAGE),
    "scale_shift_constants": (lambda: Lambda(lambda x: (x * 0.5 + 1.0) / 4.0 - 0.25), IMAGE),
    "relu": (lambda: nn.Sequential(nn.Conv2d(4, 4, 1), nn.ReLU()), IMAGE),
    "relu6": (lambda: nn.Sequential(nn.Conv2d(4, 4, 1), nn.ReLU6()), IMAGE),
    "hardtanh": (lambda: nn.Sequential(nn.Hardtanh(-0.5, 0.75)), IMAGE),
    "clamp": (lambda: Lambda(lambda x: torch.clamp(x, min=-0.25)), IMAGE),
    "sigmoid": (lambda: nn.Sequential(nn.Conv2d(4, 4, 1), nn.Sigmoid()), IMAGE),
    "hardswish": (lambda: nn.Sequential(nn.Conv2d(4, 4, 1), nn.Hardswish()), IMAGE),
    "max_pool2d": (lambda: nn.Sequential(nn.Conv2d(4, 4, 1), nn.MaxPool2d(3, stride=2, padding=1)), IMAGE),
    "avg_pool2d": (lambda: nn.Sequential(nn.AvgPool2d(2)), IMAGE),
    "global_average": (lambda: nn.Sequential(nn.Conv2d(4, 8, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                             nn.Linear(8, 3)), IMAGE),
    "mean_hw": (lambda: Lambda(lambda x: x.mean(dim=(2, 3), keepdim=True)), IMAGE),
    "softmax": (lambda: nn.Sequential(nn.Linear(16, 10), nn.Softmax(dim=-1)), (2, 16)),
    "pad": (lambda: Lambda(lambda x: F.pad(x, (1, 2, 0, 1), value=0.5)), IMAGE),
    "batch_norm": (NormalizedConv, IMAGE),
}
ZOO_MODELS = ["mlp", "smallcnn", "resblock", "dscnn", "mv2"]
# Models with an operator the Debian XNNPACK lacks: partly delegated.
MIXED_MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]] = {
    "cat_tanh": (lambda: Lambda(lambda x: torch.tanh(torch.cat([x, F.relu(x)], dim=1)) * 2.0), IMAGE),
}


@dataclass
class CompiledModel:
    """One model compiled by Kiln for XNNPACK, what it should compute and what ExecuTorch computed."""

    name: str
    flavour: str  # "fp32" or "int8"
    inputs: tuple[torch.Tensor, ...]
    expected: list[np.ndarray]  # eager PyTorch (fp32) or the quantized PyTorch model (int8)
    program: Any
    output_scale: Optional[float] = None  # int8: the scale of the dequantized output
    executorch: list[np.ndarray] = field(default_factory=list)
    executorch_error: str = ""

    @property
    def key(self) -> str:
        return f"{self.name}_{self.flavour}"


def _outputs(value: Any) -> list[np.ndarray]:
    values = value if isinstance(value, (tuple, list)) else (value,)
    return [v.detach().numpy() for v in values]


def _output_scale(quantized: torch.export.ExportedProgram) -> Optional[float]:
    output = next(n for n in quantized.graph.nodes if n.op == "output")
    last = output.args[0][0]
    return float(last.args[1]) if "dequantize" in str(last.target) else None


def compile_model(name: str, model: nn.Module, inputs: tuple[torch.Tensor, ...], flavour: str,
                  seed: int = 1) -> CompiledModel:
    model = model.eval()
    if flavour == "fp32":
        with torch.no_grad():
            expected = _outputs(model(*inputs))
        program = kiln.export(model, inputs, partitioner=XnnpackPartitioner())
        return CompiledModel(name, flavour, inputs, expected, program)
    samples = [tuple(numpy_input(tuple(x.shape), seed + i) for x in inputs) for i in range(CALIBRATION_SAMPLES)]
    quantized = kiln.quantize(model, inputs, XnnpackQuantizer(), samples)
    with torch.no_grad():
        expected = _outputs(quantized.module()(*inputs))
    program = kiln.export(quantized, partitioner=XnnpackPartitioner())
    return CompiledModel(name, flavour, inputs, expected, program, _output_scale(quantized))


def op_model(name: str, table: dict) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    factory, shape = table[name]
    with torch.no_grad():
        model = factory()
    return model, (numpy_input(shape, 0),)


def run_in_executorch(compiled: list[CompiledModel], folder: Path, executorch_python: Path) -> None:
    """Saves every program with its inputs, runs them all in one ExecuTorch process, and
    fills in ``executorch`` (outputs) or ``executorch_error``."""
    folder.mkdir(parents=True, exist_ok=True)
    for item in compiled:
        item.program.save(folder / f"{item.key}.pte")
        np.savez(folder / f"{item.key}_inputs.npz", **{f"in{i}": x.numpy() for i, x in enumerate(item.inputs)})
    subprocess.run([str(executorch_python), str(EXECUTORCH_RUNNER), "run", str(folder)], check=True,
                   capture_output=True, text=True, timeout=600)
    for item in compiled:
        outputs, error = folder / f"{item.key}_outputs.npz", folder / f"{item.key}_error.txt"
        if outputs.exists():
            arrays = np.load(outputs)
            item.executorch = [arrays[f"out{i}"] for i in range(len(arrays.files))]
        else:
            item.executorch_error = error.read_text() if error.exists() else "no outputs written"


def max_relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    scale = max(float(np.abs(expected).max()), 1e-12)
    return float(np.abs(got.astype(np.float64) - expected).max()) / scale
