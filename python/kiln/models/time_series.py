"""A 1-D convolutional network for time series (human activity recognition).

Why in the zoo: ``nn.Conv1d``/``nn.MaxPool1d`` over raw sensor windows is the usual
first model on accelerometer, vibration or ECG data.

Input: 3 accelerometer axes x 128 samples (2.56 s at 50 Hz), 1x3x128. Three
conv-bn-ReLU stages (16, 32, 64 channels, kernels 5, 5, 3), max pooling by 2 after the
first two, global average pooling over time and a linear layer to 6 activities.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm


def _stage(cin: int, cout: int, kernel: int) -> list[nn.Module]:
    return [nn.Conv1d(cin, cout, kernel, padding=kernel // 2, bias=False), nn.BatchNorm1d(cout), nn.ReLU()]


class Conv1dClassifier(nn.Module):
    def __init__(self, channels: int = 3, classes: int = 6) -> None:
        super().__init__()
        self.features = nn.Sequential(
            *_stage(channels, 16, 5), nn.MaxPool1d(2),
            *_stage(16, 32, 5), nn.MaxPool1d(2),
            *_stage(32, 64, 3),
        )
        self.classifier = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).mean(dim=-1))


def make_conv1d_har() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = Conv1dClassifier()
    shape = (1, 3, 128)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
