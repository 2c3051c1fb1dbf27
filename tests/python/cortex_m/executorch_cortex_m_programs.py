"""Makes ExecuTorch 1.5.1 Cortex-M programs and their reference outputs (run this file
with the ExecuTorch venv's python; it imports ExecuTorch, never Kiln).

For each model below it follows `aot_arm_compiler --target <cpu> -q`: channels-last
inputs, CortexMQuantizer, prepare/calibrate/convert, to_edge, CortexMPassManager, then
to_executorch. The reference outputs come from running the lowered edge program in
PyTorch, where every cortex_m:: operator is ExecuTorch's own Python reference
implementation (backends/cortex_m/ops/operators.py) - an independent judge of Kiln's
kernels. Writes, per model, <out>/<name>.pte, <name>_input_<i>.npy and
<name>_expected_<i>.npy, <name>_macs.json (multiply-accumulates per cortex_m:: operator,
from the edge graph's shapes) and <out>/operators.json (each program's operators).

Besides the test models below, benchmarks/cortex_m.py asks for single layers (pointwise,
conv3x3, depthwise, linear) and for Kiln's zoo models (zoo_mv2, zoo_dscnn, zoo_resnet8:
plain PyTorch modules under python/kiln/models, imported from the source tree).

    python executorch_cortex_m_programs.py OUT_DIR [--target cortex-m55] [--models a,b]
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from math import prod
from pathlib import Path
from typing import Any, Callable

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
    """Table activations, mul, mean."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(6, 10, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        # No hardswish, no clamp here: ExecuTorch 1.5.1's Cortex-M flow leaves them float
        # operators that read int8 tensors (or write a float tensor its int8 average pool
        # reads), ill-typed programs that only its Python reference runs.
        y = torch.tanh(y) * torch.sigmoid(y)
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


#: Single layers for instructions per MAC (benchmarks/cortex_m.py), sized like mv2's.
LAYERS = {
    "pointwise": (lambda: nn.Conv2d(96, 24, 1), lambda: (torch.randn(1, 96, 28, 28),)),
    "conv3x3": (lambda: nn.Conv2d(16, 32, 3, padding=1), lambda: (torch.randn(1, 16, 28, 28),)),
    "depthwise": (lambda: nn.Conv2d(96, 96, 3, padding=1, groups=96), lambda: (torch.randn(1, 96, 28, 28),)),
    "linear": (lambda: nn.Linear(1280, 100), lambda: (torch.randn(1, 1280),)),
}

#: Kiln zoo models: (module under python/kiln/models, its maker).
ZOO = {"zoo_mv2": ("mobilenet_v2", "make_mobilenet_v2"), "zoo_dscnn": ("ds_cnn", "make_ds_cnn"),
       "zoo_resnet8": ("resnet", "make_resnet8")}


def _model(name: str) -> tuple[nn.Module, Callable[[], tuple[torch.Tensor, ...]]]:
    """The model and a maker of (calibration) inputs."""
    if name in ZOO:
        sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "python"))
        module, maker = ZOO[name]
        model, example = getattr(importlib.import_module(f"kiln.models.{module}"), maker)()
        return model, lambda: tuple(x + 0.1 * torch.randn_like(x) for x in example)
    if name in LAYERS:
        make_model, make_inputs = LAYERS[name]
        return make_model(), make_inputs
    cls, make_inputs = MODELS[name]
    return cls(), make_inputs


def _macs(graph: Any) -> dict[str, int]:
    """Multiply-accumulates per cortex_m:: operator (weights are OHWI, depthwise 1HWC)."""
    macs: dict[str, int] = {}
    for node in graph.nodes:
        schema = getattr(node.target, "_schema", None)
        if node.op != "call_function" or schema is None or not schema.name.startswith("cortex_m::"):
            continue
        out = node.meta["val"]
        shape = lambda i: tuple(node.args[i].meta["val"].shape)  # noqa: E731
        op = schema.name.split("::")[1]
        if op.startswith("quantized_depthwise_conv2d"):
            count = out.numel() * shape(1)[1] * shape(1)[2]
        elif op.startswith(("quantized_conv2d", "quantized_transpose_conv2d")):
            count = out.numel() * prod(shape(1)[1:])
        elif op == "quantized_linear":
            count = out.numel() * shape(1)[-1]
        elif op == "quantized_batch_matmul":
            count = out.numel() * shape(0)[-1]
        else:
            continue
        key = f"cortex_m::{op}"
        macs[key] = macs.get(key, 0) + int(count)
    return macs


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
    model, make_inputs = _model(name)
    model = model.eval().to(memory_format=torch.channels_last)
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
    (out / f"{name}_macs.json").write_text(json.dumps(_macs(edge.exported_program().graph)))
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
