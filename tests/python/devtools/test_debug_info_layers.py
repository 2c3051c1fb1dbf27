"""Debugging a 1-D convolutional model on the Ethos-U55.

A Conv1d runs on the NPU as a 2-D convolution between reshapes and transposes, and Vela
names the operation after a tensor those reshapes own; the debug info still names the
Conv1d (and the MaxPool1d), because it follows Vela's source operator back to the FX node.
Vela lists each U55 transpose as one operation that runs as many, so the per-layer
comparison cannot match NPU stripes to layers: it must leave the NPU column empty rather
than report differences the NPU does not have (the delegate is bit-exact as a whole)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln import _runtime
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
from kiln.devtools import DebugInfo
from kiln.backends.arm.per_layer import compare_layers

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


@pytest.fixture(scope="module")
def sensor() -> tuple[nn.Module, tuple[torch.Tensor, ...], object, object]:
    model = Sensor1d().eval()
    inputs = (torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 64)).astype(np.float32)),)
    spec = EthosUCompileSpec("ethos-u55-128")
    quantized = kiln.quantize(model, inputs, EthosUQuantizer(spec), calibration_data=[inputs])
    return model, inputs, quantized, kiln.export(quantized, partitioner=EthosUPartitioner(spec))


def test_conv1d_npu_layers_name_their_modules(sensor, tmp_path) -> None:
    model, _, _, program = sensor
    pte = program.save(tmp_path / "new" / "sensor.pte")
    layers = DebugInfo.load(pte.with_name("sensor.debug.json")).methods[0].delegates[0].npu_layers
    module_types = dict((name, type(module).__name__) for name, module in model.named_modules() if name)
    # The mean over time is a convolution too on the NPU (its window summed by a depthwise
    # convolution of ones): it names the mean, not a module.
    convs = [layer for layer in layers if layer.operator == "Conv2D" and layer.node.operator == "aten::convolution"]
    means = [layer for layer in layers if layer.node is not None and layer.node.operator == "aten::mean.dim"]
    pools = [layer for layer in layers if layer.operator == "MaxPool"]
    assert len(convs) == 2 and len(pools) == 1 and len(means) == 1, [(l.name, l.operator) for l in layers]
    assert [layer.node.module_path for layer in convs] == ["conv", "head"]
    assert all(module_types[layer.node.module_path] == "Conv1d" == layer.node.module_type for layer in convs)
    assert pools[0].node.module_path == "pool" and pools[0].node.module_type == "MaxPool1d"


def test_per_layer_reports_no_npu_difference_the_npu_does_not_have(sensor) -> None:
    model, inputs, quantized, program = sensor
    pre = program.compile_report.delegates[0].preprocessed
    rng = np.random.default_rng(1)
    delegate_inputs = [rng.integers(-128, 128, size=io.shape).astype(np.int8) for io in pre.tosa.inputs]
    outputs = [np.zeros(io.shape, dtype=np.int8) for io in pre.tosa.outputs]
    _runtime.ethos_u_run_payload(pre.blob, [(k, bytes(v)) for k, v in pre.compile_specs], delegate_inputs, outputs)
    assert all(np.array_equal(got, want.reshape(got.shape))
               for got, want in zip(outputs, pre.tosa.run_reference(delegate_inputs)))
    rows = compare_layers(model, inputs, quantized, program)
    assert rows and all(row.max_lsb_npu in (None, 0) for row in rows), [(r.index, r.max_lsb_npu) for r in rows]
