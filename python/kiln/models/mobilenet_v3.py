"""MobileNetV3-Small (Howard et al., 2019) in plain PyTorch, on 1x3x96x96 inputs.

Why in the zoo: the efficient mobile classifier after MobileNetV2: hardswish, 5x5 depthwise
convolutions and squeeze-and-excitation with a hardsigmoid gate.

The block table is the paper's Table 2 (kernel, expansion size, output channels,
squeeze-excite, non-linearity, stride). 96x96 instead of 224x224 keeps export and
quantization fast while keeping every layer type: hardswish, squeeze-and-excite
(global mean, 1x1 convs, hardsigmoid gate, multiply), 5x5 depthwise convolutions.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm
from kiln.models.mobilenet_v2 import _make_divisible

# (kernel, expansion channels, output channels, squeeze-excite, hardswish?, stride)
_BLOCKS = (
    (3, 16, 16, True, False, 2),
    (3, 72, 24, False, False, 2),
    (3, 88, 24, False, False, 1),
    (5, 96, 40, True, True, 2),
    (5, 240, 40, True, True, 1),
    (5, 240, 40, True, True, 1),
    (5, 120, 48, True, True, 1),
    (5, 144, 48, True, True, 1),
    (5, 288, 96, True, True, 2),
    (5, 576, 96, True, True, 1),
    (5, 576, 96, True, True, 1),
)


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1,
             activation: type[nn.Module] | None = nn.Hardswish) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if activation is not None:
        layers.append(activation())
    return nn.Sequential(*layers)


class SqueezeExcite(nn.Module):
    """Channel attention: global mean -> 1x1 reduce, ReLU -> 1x1 expand, hardsigmoid -> scale."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        squeezed = _make_divisible(channels / 4)
        self.reduce = nn.Conv2d(channels, squeezed, 1)
        self.relu = nn.ReLU()
        self.expand = nn.Conv2d(squeezed, channels, 1)
        self.gate = nn.Hardsigmoid()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = self.gate(self.expand(self.relu(self.reduce(x.mean(dim=(2, 3), keepdim=True)))))
        return x * scale


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, kernel: int, expanded: int, cout: int, se: bool, hswish: bool,
                 stride: int) -> None:
        super().__init__()
        activation = nn.Hardswish if hswish else nn.ReLU
        layers: list[nn.Module] = []
        if expanded != cin:
            layers.append(_conv_bn(cin, expanded, 1, activation=activation))
        layers.append(_conv_bn(expanded, expanded, kernel, stride, groups=expanded, activation=activation))
        if se:
            layers.append(SqueezeExcite(expanded))
        layers.append(_conv_bn(expanded, cout, 1, activation=None))
        self.block = nn.Sequential(*layers)
        self.use_skip = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.block(x) if self.use_skip else self.block(x)


class MobileNetV3Small(nn.Module):
    def __init__(self, classes: int = 1000, last_channels: int = 1024) -> None:
        super().__init__()
        layers: list[nn.Module] = [_conv_bn(3, 16, 3, 2)]
        cin = 16
        for kernel, expanded, cout, se, hswish, stride in _BLOCKS:
            layers.append(InvertedResidual(cin, kernel, expanded, cout, se, hswish, stride))
            cin = cout
        layers.append(_conv_bn(cin, 576, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(
            nn.Linear(576, last_channels), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(last_channels, classes),
        )
        # He-normal convolutions as in the paper's reference code; linears keep torch's default.
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x).mean(dim=(2, 3))
        return self.classifier(x)


def make_mobilenet_v3_small() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = MobileNetV3Small()
    shape = (1, 3, 96, 96)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
