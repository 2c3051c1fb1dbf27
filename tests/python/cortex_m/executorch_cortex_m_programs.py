"""Makes ExecuTorch 1.5.1 Cortex-M programs and their reference outputs (run this file
with the ExecuTorch venv's python; it imports ExecuTorch, never Kiln).

For each model below it follows `aot_arm_compiler --target <cpu> -q`: channels-last
inputs, CortexMQuantizer, prepare/calibrate/convert, to_edge, CortexMPassManager, then
to_executorch. The reference outputs come from running the lowered edge program in
PyTorch, where every cortex_m:: operator is ExecuTorch's own Python reference
implementation (backends/cortex_m/ops/operators.py) - an independent judge of Kiln's
kernels. Writes, per model, <out>/<name>.pte, <name>_input_<i>.npy and
<name>_expected_<i>.npy, and <out>/operators.json (each program's operators).

    python executorch_cortex_m_programs.py OUT_DIR [--target cortex-m55] [--models a,b]
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class ConvFamily(nn.Module):
    """Odd channel counts, strides, padding; depthwise and pointwise; pools. (Dilation: the
    reference cannot check it, PyTorch has no dilated int32 convolution.)"""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 13, 3, stride=2, padding=1)
        self.dilated = nn.Conv2d(13, 19, (3, 5), padding=(1, 2))
        self.depthwise = nn.Conv2d(19, 19, 3, padding=1, groups=19)
        self.depthwise_strided = nn.Conv2d(19, 19, 5, stride=2, padding=2, groups=19)
        self.pointwise = nn.Conv2d(19, 37, 1)
        self.wide = nn.Conv2d(37, 21, (1, 3), padding=(0, 1), bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.stem(x))
        x = self.dilated(x)
        x = torch.clamp(self.depthwise(x), -2.0, 3.0) + x
        x = F.relu6(self.depthwise_strided(x))
        x = self.pointwise(x)
        x = F.max_pool2d(x, 3, stride=2, padding=1)
        return self.wide(x)


class Pooling(nn.Module):
    """Average pools (ceil mode, padding, global) after a convolution."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(5, 11, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = F.avg_pool2d(x, 2, stride=2, ceil_mode=True)
        x = F.avg_pool2d(x, 3, stride=1, padding=1)
        return x.mean(dim=(2, 3), keepdim=True)


class Classifier(nn.Module):
    """Fully connected layers on odd sizes, a residual add and mul, softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(37, 29)
        self.fc2 = nn.Linear(29, 29)
        self.fc3 = nn.Linear(29, 11)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        h = h + self.fc2(h)
        h = h * torch.sigmoid(h)
        return torch.softmax(self.fc3(h), dim=-1)


class Activations(nn.Module):
    """Table activations, clamps, mul with broadcast, transpose, mean."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(6, 10, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        y = torch.tanh(y) * torch.sigmoid(y)
        y = torch.clamp(y, min=-0.5, max=0.75)
        y = F.hardswish(y)
        return y.mean(dim=(2, 3), keepdim=True)


class Matmul(nn.Module):
    """Batched matmul of two activations (attention-like)."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b.transpose(1, 2))


MODELS = {
    "conv_family": (ConvFamily, lambda: (torch.randn(1, 3, 23, 19),)),
    "pooling": (Pooling, lambda: (torch.randn(1, 5, 12, 9),)),
    "classifier": (Classifier, lambda: (torch.randn(3, 37),)),
    "activations": (Activations, lambda: (torch.randn(1, 6, 9, 11),)),
    "matmul": (Matmul, lambda: (torch.randn(2, 7, 19), torch.randn(2, 13, 19))),
}


def _channels_last(x: torch.Tensor) -> torch.Tensor:
    return x.to(memory_format=torch.channels_last) if x.dim() == 4 else x


def build(name: str, target: str, out: Path) -> list[str]:
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    torch.manual_seed(sum(map(ord, name)))
    cls, make_inputs = MODELS[name]
    model = cls().eval().to(memory_format=torch.channels_last)
    inputs = tuple(_channels_last(x) for x in make_inputs())
    graph = torch.export.export(model, inputs).module(check_guards=False)
    prepared = prepare_pt2e(graph, CortexMQuantizer())
    for _ in range(4):
        prepared(*(_channels_last(x) for x in make_inputs()))
    prepared(*inputs)
    quantized = convert_pt2e(prepared)
    exported = torch.export.export(quantized, inputs)
    edge = to_edge_transform_and_lower(exported, compile_config=cortex_m_edge_compile_config())
    manager = CortexMPassManager(edge.exported_program(), target_config=CortexMTargetConfig.from_target_string(target))
    edge._edge_programs["forward"] = manager.transform()
    expected = edge.exported_program().module()(*inputs)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    program = edge.to_executorch(config=ExecutorchBackendConfig(extract_delegate_segments=False))
    (out / f"{name}.pte").write_bytes(program.buffer)
    for i, x in enumerate(inputs):
        np.save(out / f"{name}_input_{i}.npy", x.contiguous().numpy())
    for i, y in enumerate(expected):
        np.save(out / f"{name}_expected_{i}.npy", y.contiguous().numpy())
    operators = program.executorch_program.execution_plan[0].operators
    return sorted({f"{op.name}.{op.overload}" for op in operators})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--target", default="cortex-m55")
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    args.out.mkdir(parents=True, exist_ok=True)
    operators = {name: build(name, args.target, args.out) for name in args.models.split(",")}
    (args.out / "operators.json").write_text(json.dumps(operators, indent=1))
    print(json.dumps(operators, indent=1))


if __name__ == "__main__":
    main()
