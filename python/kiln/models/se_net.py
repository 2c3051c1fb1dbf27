"""A small CNN with squeeze-and-excitation blocks (Hu et al., "SENet", 2018), 1x3x32x32.

Why in the zoo: the original squeeze-and-excitation gate — global average pool, two
linear layers, sigmoid, channel-wise multiply broadcast over the image — appears in
many efficient networks; MobileNetV3's variant (1x1 convs, hardsigmoid) is different.

A 3x3 stem to 16 channels, three residual SE blocks (16, 32 and 64 channels, the last
two with stride 2 and a 1x1 projection), global average pooling, linear to 10 classes.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm


class SqueezeExcitation(nn.Module):
    def __init__(self, channels: int, reduction: int = 4) -> None:
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate = torch.sigmoid(self.fc2(torch.relu(self.fc1(x.mean(dim=(2, 3))))))
        return x * gate[:, :, None, None]


class SEBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout),
            SqueezeExcitation(cout),
        )
        self.skip: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.skip(x))


class SENet(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.blocks = nn.Sequential(SEBlock(16, 16, 1), SEBlock(16, 32, 2), SEBlock(32, 64, 2))
        self.classifier = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.blocks(self.stem(x)).mean(dim=(2, 3)))


def make_se_net() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = SENet()
    shape = (1, 3, 32, 32)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
