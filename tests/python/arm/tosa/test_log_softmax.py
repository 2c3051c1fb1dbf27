"""log_softmax on every Ethos-U: Kiln's integer lowering (tosa/ops/softmax.py) on the TOSA
reference model against quantized PyTorch (float log_softmax between the int8 input's
dequantize and the output's quantize), and the partitioner's decision for models as users
write them.

The q/dq cases ``log_softmax*`` of qdq_cases.py run the same lowering on the virtual NPU for
every Ethos-U55/U65/U85 configuration, bit for bit against the TOSA reference
(vnpu/test_lowered_ops.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

TARGETS = ["ethos-u55-128", "ethos-u85-256"]

# (input scale, shape, dim): classification heads (a few to 1000 classes), an audio model's
# classes along dim 1, a batch of rows, coarse and fine input steps.
CASES = {
    "classes_fine_input": (0.05, (4, 40), -1),
    "classes": (3.0, (2, 10), -1),
    "classes_coarse_input": (60.0, (4, 12), -1),
    "thousand_classes": (2.0, (2, 1000), -1),
    "long_rows": (20.0, (3, 3000), -1),
    "audio_frames": (0.2, (1, 12, 32), 1),
    "batch_of_rows": (8.0, (5, 3, 6, 29), -1),
}


def test_log_tables_hold_ln_and_its_slope_at_each_step() -> None:
    from kiln.backends.arm.tosa.ops.softmax import log_tables

    high, low, slope = log_tables(16)
    f0 = 1.0 + np.arange(256) / 256.0
    value = (high.astype(np.int64) + 128) * 256 + low.astype(np.int64) + 128
    assert np.abs(value - np.log(f0) * 2**16).max() <= 0.5
    assert np.abs((slope.astype(np.int64) + 192) - 256.0 / f0).max() <= 0.5


@pytest.mark.parametrize("scale", [1e-4, 0.05, 1.0, 40.0, 400.0])
def test_fixed_point_keeps_the_result_inside_int32(scale: float) -> None:
    from kiln.backends.arm.tosa.ops.softmax import log_fraction_bits

    bits = log_fraction_bits(scale)
    assert 0 <= bits <= 16
    assert (255 * scale + math.log(65535 * 32767)) * 2**bits < 2**31


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_matches_quantized_pytorch(qdq, name: str, target: str) -> None:
    from kiln.backends.arm import EthosUCompileSpec
    from kiln.backends.arm.tosa import lower_to_tosa

    scale, shape, dim = CASES[name]
    torch.manual_seed(0)
    case = qdq.QCase(lambda self, x: F.log_softmax(x, dim=dim))
    ints = case.calibrate(torch.randn(*shape) * scale)
    subgraph = lower_to_tosa(qdq.export_graph(case, ints), EthosUCompileSpec(target), name=name)
    assert {"REDUCE_MAX", "TABLE", "REDUCE_SUM", "CLZ", "MUL"} <= set(subgraph.op_counts)
    (result,) = subgraph.run_reference([x.numpy() for x in ints])
    expected = case(*ints).numpy()
    difference = np.abs(result.astype(np.int32) - expected.astype(np.int32))
    # One step only where PyTorch's float32 result lies within rounding noise of a step
    # boundary: measured, one element in 2000 on the thousand-class rows, none elsewhere.
    assert difference.max() <= 1, f"{name}: {difference.max()} output steps from quantized PyTorch"
    assert np.count_nonzero(difference) <= max(1, difference.size // 1000), (
        f"{name}: {np.count_nonzero(difference)} of {difference.size} outputs one step off")


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10), nn.LogSoftmax(dim=-1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


@pytest.mark.parametrize("target", TARGETS)
def test_classifier_head_is_delegated_and_runs_like_quantized_pytorch(target: str) -> None:
    import kiln
    from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
    from kiln.runtime import Runtime

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    samples = [(torch.from_numpy(rng.standard_normal((4, 16)).astype(np.float32)),) for _ in range(4)]
    quantized = kiln.quantize(Classifier().eval(), samples[0], EthosUQuantizer(EthosUCompileSpec(target)),
                              samples, progress=False)
    program = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    report = program.compile_report.partition_report
    decisions = [d for d in report.decisions if d.operator == "aten::_log_softmax"]
    assert decisions and all(d.delegated for d in decisions), [d.reason for d in decisions]
    assert len(report.partitions) == 1
    (got,) = Runtime().load_program(program.to_bytes()).load_method("forward").execute([samples[1][0].numpy()])
    with torch.no_grad():
        expected = quantized.module()(*samples[1]).numpy()
    step = next(float(n.args[1]) for n in reversed(quantized.graph.nodes) if "dequantize" in str(n.target))
    assert np.abs(got - expected).max() / step <= 1 + 1e-3
