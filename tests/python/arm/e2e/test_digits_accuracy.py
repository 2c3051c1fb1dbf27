"""Accuracy on real data: a small CNN trained on scikit-learn's 8x8 handwritten digits,
written as users write it (``nn.Sequential``, data from numpy arrays), quantized to int8
and compiled for ethos-u55-128, keeps its test accuracy on the virtual NPU within one
percentage point of the float model's."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.runtime import Runtime

TARGET = "ethos-u55-128"
MAX_ACCURACY_DROP = 0.01  # one percentage point
CALIBRATION_SAMPLES = 64


def _digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]  # N x 1 x 8 x 8 in [0, 1]
    return train_test_split(images, digits.target, test_size=0.25, random_state=0, stratify=digits.target)


def _train(x_train: np.ndarray, y_train: np.ndarray) -> nn.Module:
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 4 * 4, 32), nn.ReLU(), nn.Linear(32, 10),
    )
    images, labels = torch.from_numpy(x_train), torch.from_numpy(y_train)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # batches of 64 8x8 images gain nothing from threads, and lose on a busy machine
    try:
        for _ in range(8):
            for batch in torch.randperm(len(images), generator=generator).split(64):
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(images[batch]), labels[batch]).backward()
                optimizer.step()
    finally:
        torch.set_num_threads(threads)
    return model.eval()


@pytest.fixture(scope="module")
def trained():
    x_train, x_test, y_train, y_test = _digits()
    return _train(x_train, y_train), x_train, x_test, y_test


@pytest.mark.slow
def test_int8_accuracy_on_the_virtual_npu_is_within_one_point_of_fp32(trained) -> None:
    model, x_train, x_test, y_test = trained
    with torch.no_grad():
        fp32_accuracy = float((model(torch.from_numpy(x_test)).argmax(1).numpy() == y_test).mean())
    assert fp32_accuracy > 0.95, f"the float model did not learn the digits ({fp32_accuracy:.1%})"

    logging.getLogger("torchao").setLevel(logging.ERROR)
    example = (torch.from_numpy(x_train[:1]),)
    calibration = [(torch.from_numpy(x_train[i : i + 1]),) for i in range(CALIBRATION_SAMPLES)]
    spec = EthosUCompileSpec(TARGET)
    quantized = kiln.quantize(model, example, EthosUQuantizer(spec), calibration, progress=False)
    program = kiln.export(quantized, partitioner=EthosUPartitioner(spec))
    report = program.compile_report
    assert len(report.delegates) == 1
    assert {d.operator for d in report.partition_report.rejections()} <= {
        "quantized_decomposed::quantize_per_tensor", "quantized_decomposed::dequantize_per_tensor"}

    method = Runtime().load_program(program.to_bytes()).load_method("forward")
    predictions = np.array([np.asarray(method.execute([x_test[i : i + 1]])[0]).argmax() for i in range(len(x_test))])
    npu_accuracy = float((predictions == y_test).mean())
    print(f"digits test accuracy: fp32 {fp32_accuracy:.2%}, int8 on the virtual {TARGET} {npu_accuracy:.2%}")
    assert npu_accuracy >= fp32_accuracy - MAX_ACCURACY_DROP, (
        f"int8 on the NPU {npu_accuracy:.2%} vs fp32 {fp32_accuracy:.2%}")
