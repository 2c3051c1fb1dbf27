"""Small convolutional networks for fast end-to-end tests.

Why in the zoo: the smallest convolutional networks, for fast end-to-end tests.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm


class SmallCNN(nn.Module):
    """Two conv-bn-relu-maxpool stages, global average pool, linear classifier."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = x.mean(dim=(2, 3))
        return self.classifier(x)


class ResBlock(nn.Module):
    """An inverted-residual block (expand, depthwise, project) with a skip connection."""

    def __init__(self, channels: int = 16, expand: int = 4) -> None:
        super().__init__()
        hidden = channels * expand
        self.body = nn.Sequential(
            nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, channels, 1, bias=False), nn.BatchNorm2d(channels),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x)


def make_small_cnn() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = SmallCNN()
    shape = (1, 3, 32, 32)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)


def make_res_block() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = ResBlock()
    shape = (1, 16, 16, 16)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
