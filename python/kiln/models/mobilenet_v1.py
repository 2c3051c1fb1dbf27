"""MobileNetV1 at width 0.25 on 96x96 inputs: MLPerf Tiny's visual wake words model.

Why in the zoo: the person-detection network every Cortex-M + Ethos-U board ships first.

Shapes as the MLPerf Tiny reference (Chowdhery et al., "Visual Wake Words", 2019): a
3x3 stride-2 convolution to 8 channels, thirteen depthwise-separable blocks (3x3
depthwise + 1x1 pointwise, each followed by batch norm and ReLU) whose pointwise
widths are 16, 32, 32, 64, 64, 128 (x6), 256, 256 with stride 2 at blocks 2, 4, 6 and
12, global average pooling over the final 3x3 and a linear layer to 2 classes
(person / no person). Convolutions carry a bias, as Keras' do by default.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm

# (pointwise output channels, depthwise stride) of the 13 separable blocks at width 0.25.
_BLOCKS = ((16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2),
           (128, 1), (128, 1), (128, 1), (128, 1), (128, 1), (256, 2), (256, 1))  # fmt: skip


def _conv_bn_relu(cin: int, cout: int, kernel: int, stride: int, groups: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups), nn.BatchNorm2d(cout), nn.ReLU()]


class MobileNetV1(nn.Module):
    def __init__(self, classes: int = 2, stem: int = 8) -> None:
        super().__init__()
        layers = _conv_bn_relu(3, stem, 3, 2)
        cin = stem
        for cout, stride in _BLOCKS:
            layers += _conv_bn_relu(cin, cin, 3, stride, groups=cin) + _conv_bn_relu(cin, cout, 1, 1)
            cin = cout
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(cin, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)  # Keras' he_normal, as the reference

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).mean(dim=(2, 3)))


def make_mobilenet_v1_vww() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = MobileNetV1()
    shape = (1, 3, 96, 96)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
