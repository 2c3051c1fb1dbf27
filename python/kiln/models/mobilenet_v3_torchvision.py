"""MobileNetV3-Small in torchvision's structure (``torchvision.models.mobilenet_v3_small``),
written for Kiln in plain PyTorch, on 1x3x224x224 inputs.

Why in the zoo: most MobileNetV3s reach an NPU toolchain as torchvision builds them, and
torchvision spells the network differently from the paper-style model in
``mobilenet_v3.py``: ``Conv2dNormActivation`` blocks with in-place activations, a
squeeze-excite module of ``AdaptiveAvgPool2d`` and two 1x1 ``Conv2d`` (``fc1``, ``fc2``)
that multiplies its input by the hardsigmoid gate, in-place residual adds, and a head of
``AdaptiveAvgPool2d``, ``torch.flatten`` and ``Sequential(Linear, Hardswish, Dropout,
Linear)``. Batch norms use torchvision's eps 0.001, convolutions its He-normal initialisation; the
linear layers keep PyTorch's default (torchvision's N(0, 0.01) gives untrained logits of
about 0.01, too small to compare quantized outputs on).

torchvision does not install beside torch here, so this is written from its published
architecture (the bneck table of the paper's Table 2, width 1.0).
"""

from __future__ import annotations

from functools import partial

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm
from kiln.models.mobilenet_v2 import _make_divisible

# (input channels, kernel, expanded channels, output channels, squeeze-excite, activation, stride)
_BNECK = (
    (16, 3, 16, 16, True, "RE", 2),
    (16, 3, 72, 24, False, "RE", 2),
    (24, 3, 88, 24, False, "RE", 1),
    (24, 5, 96, 40, True, "HS", 2),
    (40, 5, 240, 40, True, "HS", 1),
    (40, 5, 240, 40, True, "HS", 1),
    (40, 5, 120, 48, True, "HS", 1),
    (48, 5, 144, 48, True, "HS", 1),
    (48, 5, 288, 96, True, "HS", 2),
    (96, 5, 576, 96, True, "HS", 1),
    (96, 5, 576, 96, True, "HS", 1),
)
_LAST_CHANNELS = 1024
_BatchNorm = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)


class Conv2dNormActivation(nn.Sequential):
    """Conv2d (no bias), BatchNorm, optional in-place activation: torchvision.ops.misc's block."""

    def __init__(self, cin: int, cout: int, kernel: int = 3, stride: int = 1, groups: int = 1,
                 activation: type[nn.Module] | None = nn.ReLU) -> None:
        layers: list[nn.Module] = [
            nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
            _BatchNorm(cout),
        ]
        if activation is not None:
            layers.append(activation(inplace=True))
        super().__init__(*layers)


class SqueezeExcitation(nn.Module):
    """torchvision.ops.SqueezeExcitation with MobileNetV3's hardsigmoid gate."""

    def __init__(self, channels: int, squeezed: int) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.fc2 = nn.Conv2d(squeezed, channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()

    def _scale(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._scale(x) * x


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, kernel: int, expanded: int, cout: int, se: bool, activation: str,
                 stride: int) -> None:
        super().__init__()
        act = nn.Hardswish if activation == "HS" else nn.ReLU
        layers: list[nn.Module] = []
        if expanded != cin:
            layers.append(Conv2dNormActivation(cin, expanded, 1, activation=act))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel, stride, groups=expanded, activation=act))
        if se:
            layers.append(SqueezeExcitation(expanded, _make_divisible(expanded // 4, 8)))
        layers.append(Conv2dNormActivation(expanded, cout, 1, activation=None))
        self.block = nn.Sequential(*layers)
        self.use_res_connect = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.block(x)
        if self.use_res_connect:
            result += x
        return result


class MobileNetV3(nn.Module):
    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        layers: list[nn.Module] = [Conv2dNormActivation(3, 16, 3, 2, activation=nn.Hardswish)]
        layers += [InvertedResidual(*config) for config in _BNECK]
        layers.append(Conv2dNormActivation(96, 576, 1, activation=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(576, _LAST_CHANNELS), nn.Hardswish(inplace=True), nn.Dropout(p=0.2, inplace=True),
            nn.Linear(_LAST_CHANNELS, classes),
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


def make_mobilenet_v3_torchvision(size: int = 224) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = MobileNetV3()
    shape = (1, 3, size, size)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
