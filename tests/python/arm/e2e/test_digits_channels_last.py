"""A CNN with batch norms and a global average pool, trained on scikit-learn's 8x8 digits and
run channels-last (``model.to(memory_format=torch.channels_last)``, as PyTorch's
performance guide recommends for CNNs), compiles and keeps its accuracy: fp32 on the CPU
equals eager, int8 on the virtual ethos-u55-128 and ethos-u85-256 stays within one
percentage point of fp32, with the whole network in one NPU delegate.

Channels-last is what makes this model special: torch.export restrides the global pool's
result as eager laid it out, ``as_strided(mean, [1, 32, 1, 1], [32, 1, 32, 32])``, which
Kiln turns into a view (kiln.passes.as_strided) instead of refusing it.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
from kiln.runtime import Runtime

TARGETS = ("ethos-u55-128", "ethos-u85-256")
MAX_ACCURACY_DROP = 0.01  # one percentage point
CALIBRATION_SAMPLES = 64
EPOCHS = 6
# The only nodes left on the CPU: quantizing the input, dequantizing the logits.
BOUNDARY = {"quantized_decomposed::quantize_per_tensor", "quantized_decomposed::dequantize_per_tensor"}


def _digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]  # N x 1 x 8 x 8 in [0, 1]
    return train_test_split(images, digits.target, test_size=0.25, random_state=0, stratify=digits.target)


def _cnn() -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10),
    )


def _channels_last(images: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(images).contiguous(memory_format=torch.channels_last)


def _train(x_train: np.ndarray, y_train: np.ndarray) -> nn.Module:
    torch.manual_seed(0)
    model = _cnn().to(memory_format=torch.channels_last)
    images, labels = _channels_last(x_train), torch.from_numpy(y_train)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # batches of 64 8x8 images gain nothing from threads, and lose on a busy machine
    try:
        for _ in range(EPOCHS):
            for batch in torch.randperm(len(images), generator=generator).split(64):
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(images[batch]), labels[batch]).backward()
                optimizer.step()
    finally:
        torch.set_num_threads(threads)
    return model.eval()


def _accuracy(predict, images: np.ndarray, labels: np.ndarray) -> float:
    predictions = np.array([int(np.asarray(predict(images[i : i + 1])).argmax()) for i in range(len(images))])
    return float((predictions == labels).mean())


@pytest.fixture(scope="module")
def trained():
    """(model, example inputs, x_train, x_test, y_test, fp32 test accuracy), trained once."""
    x_train, x_test, y_train, y_test = _digits()
    model = _train(x_train, y_train)
    with torch.no_grad():
        fp32_accuracy = float((model(_channels_last(x_test)).argmax(1).numpy() == y_test).mean())
    assert fp32_accuracy > 0.95, f"the float model did not learn the digits ({fp32_accuracy:.1%})"
    return model, (_channels_last(x_train[:1]),), x_train, x_test, y_test, fp32_accuracy


@pytest.fixture(scope="module")
def quantized(trained):
    """The int8 program (one quantizer config serves every Ethos-U target)."""
    model, example, x_train, *_ = trained
    logging.getLogger("torchao").setLevel(logging.ERROR)
    calibration = [(_channels_last(x_train[i : i + 1]),) for i in range(CALIBRATION_SAMPLES)]
    quantizer = EthosUQuantizer(EthosUCompileSpec(TARGETS[0]))
    return kiln.quantize(model, example, quantizer, calibration, progress=False)


def test_torch_export_restrides_the_global_pool(trained) -> None:
    """The premise of this file: without it the other tests would not exercise as_strided."""
    model, example, *_ = trained
    graph = torch.export.export(model, example).run_decompositions().graph
    restrides = [n for n in graph.nodes if n.target is torch.ops.aten.as_strided.default]
    assert [list(n.args[2]) for n in restrides] == [[32, 1, 32, 32]], graph


def test_fp32_program_matches_eager(trained) -> None:
    model, example, _, x_test, y_test, fp32_accuracy = trained
    program = kiln.export(model, example)
    assert not any("as_strided" in op for op in program.operators), program.operators  # a view, not a copy
    method = Runtime().load_program(program.to_bytes()).load_method("forward")
    images = x_test[:64]
    with torch.no_grad():
        expected = model(_channels_last(images)).numpy()
    got = np.concatenate([np.asarray(method.execute([images[i : i + 1]])[0]) for i in range(len(images))])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert _accuracy(lambda x: method.execute([x])[0], x_test, y_test) == pytest.approx(fp32_accuracy, abs=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_int8_on_the_virtual_npu_is_fully_delegated_and_within_one_point_of_fp32(trained, quantized,
                                                                                  target: str) -> None:
    *_, x_test, y_test, fp32_accuracy = trained
    program = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    report = program.compile_report
    partition = report.partition_report
    on_cpu = {(d.operator, d.reason) for d in partition.rejections()}
    assert len(report.delegates) == 1 and {op for op, _ in on_cpu} <= BOUNDARY, partition.table()

    method = Runtime().load_program(program.to_bytes()).load_method("forward")
    npu_accuracy = _accuracy(lambda x: method.execute([x])[0], x_test, y_test)
    print(f"digits (channels-last CNN) test accuracy: fp32 {fp32_accuracy:.2%}, int8 on the virtual {target} "
          f"{npu_accuracy:.2%}; {partition.delegated_nodes} nodes delegated, {partition.cpu_nodes} on the CPU")
    assert npu_accuracy >= fp32_accuracy - MAX_ACCURACY_DROP, (
        f"int8 on the {target} {npu_accuracy:.2%} vs fp32 {fp32_accuracy:.2%}")
