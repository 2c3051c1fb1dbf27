"""Every NPU layer of a 1-D convolutional model is named by the PyTorch module it came from.

A Conv1d runs on the NPU as a 2-D convolution between reshapes, and Vela names the
operation after a tensor those reshapes own; the debug info still names the Conv1d (and
the MaxPool1d), because it follows Vela's source operator back to the FX node."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
from kiln.devtools import DebugInfo

pytestmark = pytest.mark.slow


class Sensor1d(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(3, 8, 5, padding=2)
        self.act = nn.ReLU()
        self.pool = nn.MaxPool1d(2)
        self.head = nn.Conv1d(8, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.act(self.conv(x)))).mean(dim=-1)


def test_conv1d_npu_layers_name_their_modules(tmp_path) -> None:
    model = Sensor1d().eval()
    inputs = (torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 64)).astype(np.float32)),)
    spec = EthosUCompileSpec("ethos-u55-128")
    quantized = kiln.quantize(model, inputs, EthosUQuantizer(spec), calibration_data=[inputs])
    program = kiln.export(quantized, partitioner=EthosUPartitioner(spec))
    pte = program.save(tmp_path / "new" / "sensor.pte")
    layers = DebugInfo.load(pte.with_name("sensor.debug.json")).methods[0].delegates[0].npu_layers
    module_types = dict((name, type(module).__name__) for name, module in model.named_modules() if name)
    convs = [layer for layer in layers if layer.operator == "Conv2D"]
    pools = [layer for layer in layers if layer.operator == "MaxPool"]
    assert len(convs) == 2 and len(pools) == 1, [(l.name, l.operator) for l in layers]
    assert [layer.node.module_path for layer in convs] == ["conv", "head"]
    assert all(module_types[layer.node.module_path] == "Conv1d" == layer.node.module_type for layer in convs)
    assert pools[0].node.module_path == "pool" and pools[0].node.module_type == "MaxPool1d"
