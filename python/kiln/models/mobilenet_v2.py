"""MobileNetV2 (Sandler et al., 2018), written for Kiln in plain PyTorch.

Why in the zoo: the reference mobile classifier every NPU toolchain quotes numbers for.

torchvision has no CPU build here, so the network is defined from the paper: a 3x3
stem, seventeen inverted-residual blocks given by the (expansion t, channels c,
repeats n, stride s) table, a 1x1 conv to 1280 channels, global average pooling and
a linear classifier. ReLU6 everywhere, batch norm after every convolution.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm

# (expansion factor t, output channels c, repeats n, first stride s), from the paper's Table 2.
_BLOCKS = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def _make_divisible(value: float, divisor: int = 8) -> int:
    """Rounds channel counts to a multiple of 8 (never dropping more than 10%)."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _conv_bn_relu6(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU6(inplace=True),
    )


class InvertedResidual(nn.Module):
    """1x1 expansion, 3x3 depthwise, 1x1 linear projection; skip when shapes allow."""

    def __init__(self, cin: int, cout: int, stride: int, expansion: int) -> None:
        super().__init__()
        hidden = cin * expansion
        layers: list[nn.Module] = []
        if expansion != 1:
            layers.append(_conv_bn_relu6(cin, hidden, 1))
        layers += [
            _conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),
            nn.Conv2d(hidden, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        ]
        self.conv = nn.Sequential(*layers)
        self.use_skip = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(x) if self.use_skip else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, classes: int = 1000, width: float = 1.0, dropout: float = 0.2) -> None:
        super().__init__()
        cin = _make_divisible(32 * width)
        last = _make_divisible(1280 * max(1.0, width))
        layers: list[nn.Module] = [_conv_bn_relu6(3, cin, 3, stride=2)]
        for t, c, n, s in _BLOCKS:
            cout = _make_divisible(c * width)
            for i in range(n):
                layers.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                cin = cout
        layers.append(_conv_bn_relu6(cin, last, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(dropout), nn.Linear(last, classes))
        self._init_weights()

    def _init_weights(self) -> None:
        # The usual MobileNetV2 initialisation: He-normal convs, N(0, 0.01) classifier.
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = x.mean(dim=(2, 3))
        return self.classifier(x)


def make_mobilenet_v2() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = MobileNetV2()
    shape = (1, 3, 224, 224)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
