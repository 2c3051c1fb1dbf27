"""ResNet-8 (MLPerf Tiny image classification): CIFAR-10 sized, 1x3x32x32 -> 10 classes.

Why in the zoo: MLPerf Tiny's image-classification benchmark, the smallest residual network.

As the MLPerf Tiny reference (its Keras ``resnet_v1_eembc``): a 3x3 stem with 16
channels, three residual stages of 16, 32 and 64 channels (the second and third stride
2, with a plain 1x1 stride-2 convolution on the skip path), global average pooling and
a linear classifier. Each block is conv-bn-relu, conv-bn, add, relu: the add + relu
pair is the pattern the quantizer fuses. Convolutions carry a bias, as Keras' do.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Conv2d(cin, cout, 1, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + self.shortcut(x))


class ResNet8(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.stages = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2))
        self.classifier = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stages(self.stem(x))
        return self.classifier(x.mean(dim=(2, 3)))


def make_resnet8() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = ResNet8()
    shape = (1, 3, 32, 32)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
