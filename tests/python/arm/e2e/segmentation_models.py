"""A DeepLabV3-style segmentation model written the way torchvision writes it, for the
Ethos-U tests: a small ResNet backbone whose last stage trades stride for dilation (output
stride 8), the ASPP head (a 1x1 branch, three dilated 3x3 branches, an image-pooling branch
upsampled back with bilinear interpolation, concatenation, projection), a classifier, and
the bilinear upsampling by 8 back to the input's size.

Random weights from a seed; BatchNorm statistics settled on inputs of the calibration
distribution (speech_models.settle_batch_norms), so activations are realistic.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .speech_models import settle_batch_norms  # type: ignore[import-not-found]


def conv_bn_relu(cin: int, cout: int, kernel: int = 3, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    padding = dilation * (kernel - 1) // 2
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, padding, dilation=dilation, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU())


class BasicBlock(nn.Module):
    """ResNet's basic block; ``dilation`` > 1 replaces a stride, as torchvision's
    ``replace_stride_with_dilation`` does for DeepLab."""

    def __init__(self, cin: int, cout: int, stride: int = 1, dilation: int = 1) -> None:
        super().__init__()
        self.conv1 = conv_bn_relu(cin, cout, 3, stride, dilation)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, dilation, dilation=dilation, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(self.bn2(self.conv2(self.conv1(x))) + identity)


class ASPPPooling(nn.Sequential):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__(nn.AdaptiveAvgPool2d(1), nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = x.shape[-2:]
        for module in self:
            x = module(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    def __init__(self, cin: int, rates: tuple[int, ...], cout: int) -> None:
        super().__init__()
        branches = [conv_bn_relu(cin, cout, 1)]
        branches += [conv_bn_relu(cin, cout, 3, dilation=rate) for rate in rates]
        branches.append(ASPPPooling(cin, cout))
        self.convs = nn.ModuleList(branches)
        self.project = nn.Sequential(conv_bn_relu(len(branches) * cout, cout, 1), nn.Dropout(0.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.project(torch.cat([branch(x) for branch in self.convs], dim=1))


class DeepLabV3(nn.Module):
    """forward(image (batch, 3, H, W)) -> per-pixel class scores (batch, classes, H, W)."""

    def __init__(self, classes: int = 6, width: int = 16, rates: tuple[int, ...] = (2, 4, 6)) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv_bn_relu(3, width, 3, stride=2), nn.MaxPool2d(3, 2, 1))
        self.layer1 = BasicBlock(width, width)
        self.layer2 = BasicBlock(width, 2 * width, stride=2)
        self.layer3 = BasicBlock(2 * width, 2 * width, dilation=2)  # stride replaced by dilation
        self.aspp = ASPP(2 * width, rates, width)
        self.head = nn.Sequential(conv_bn_relu(width, width, 3), nn.Conv2d(width, classes, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = x.shape[-2:]
        features = self.layer3(self.layer2(self.layer1(self.stem(x))))
        scores = self.head(self.aspp(features))
        return F.interpolate(scores, size=size, mode="bilinear", align_corners=False)


def deeplab_v3(seed: int = 0, size: int = 64) -> tuple[nn.Module, tuple[torch.Tensor], list[tuple[torch.Tensor]]]:
    """(model, example inputs, calibration samples): 3 x ``size`` x ``size`` images."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    samples = [(torch.from_numpy(rng.standard_normal((1, 3, size, size)).astype(np.float32)),) for _ in range(4)]
    # One batch of every sample: the image-pooling branch's BatchNorm sees one value per
    # channel and image, and training mode needs more than one.
    settling = [(torch.cat([sample[0] for sample in samples]),)]
    return settle_batch_norms(DeepLabV3(), settling), samples[0], samples
