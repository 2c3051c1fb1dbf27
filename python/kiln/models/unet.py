"""A small U-Net for segmentation (Ronneberger et al., 2015), 1x3x64x64 -> 1x2x64x64.

Why in the zoo: segmentation models need nearest-neighbour upsampling and channel
concatenation of skip connections, which classifiers never exercise.

Two encoder levels (16 and 32 channels, each two conv-bn-ReLU and a 2x2 max pool),
a 64-channel bottleneck, two decoder levels that upsample by 2 (nearest), concatenate
the encoder's features of the same size and apply two conv-bn-ReLU, then a 1x1
convolution to 2 classes (per-pixel logits).
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm


def _double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
    )


class UNet(nn.Module):
    def __init__(self, channels: int = 3, classes: int = 2) -> None:
        super().__init__()
        self.encode1 = _double_conv(channels, 16)
        self.encode2 = _double_conv(16, 32)
        self.bottleneck = _double_conv(32, 64)
        self.pool = nn.MaxPool2d(2)
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.decode2 = _double_conv(64 + 32, 32)
        self.decode1 = _double_conv(32 + 16, 16)
        self.head = nn.Conv2d(16, classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skip1 = self.encode1(x)
        skip2 = self.encode2(self.pool(skip1))
        y = self.bottleneck(self.pool(skip2))
        y = self.decode2(torch.cat([self.upsample(y), skip2], dim=1))
        y = self.decode1(torch.cat([self.upsample(y), skip1], dim=1))
        return self.head(y)


def make_unet() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = UNet()
    shape = (1, 3, 64, 64)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
