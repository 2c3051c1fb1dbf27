"""Fully connected autoencoder for anomaly detection (MLPerf Tiny, DCASE 2020 ToyADMOS).

Why in the zoo: MLPerf Tiny's anomaly-detection benchmark, a pure fully connected network.

Input: 5 frames x 128 log-mel bins flattened to 1x640. Encoder 640-128-128-128-128-8,
decoder 8-128-128-128-128-640; every hidden layer is linear, batch norm, ReLU (the
batch norms fold into the linear layers when quantized). The anomaly score is the
reconstruction error, so the output is the reconstruction itself.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm

_WIDTHS = (640, 128, 128, 128, 128, 8, 128, 128, 128, 128)


class AutoEncoder(nn.Module):
    def __init__(self, features: int = 640) -> None:
        super().__init__()
        widths = (features, *_WIDTHS[1:])
        layers: list[nn.Module] = []
        for cin, cout in zip(widths, widths[1:]):
            layers += [nn.Linear(cin, cout), nn.BatchNorm1d(cout), nn.ReLU()]
        layers.append(nn.Linear(widths[-1], features))
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def make_autoencoder() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = AutoEncoder()
    shape = (1, 640)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
