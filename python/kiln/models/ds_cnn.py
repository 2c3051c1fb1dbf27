"""DS-CNN keyword spotting (Zhang et al., "Hello Edge", 2017; MLPerf Tiny's KWS model).

Why in the zoo: MLPerf Tiny's keyword-spotting benchmark, the canonical always-on audio model.

Input: 49 frames x 10 MFCC coefficients, 1x1x49x10. A 10x4 stride-2 convolution to 64
channels ("same" padding as in the TensorFlow original, written as an explicit
asymmetric zero pad), four depthwise-separable blocks (3x3 depthwise + 1x1
pointwise, each with batch norm and ReLU), global average pooling and a linear layer
to 12 classes (10 words, silence, unknown).
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm


def _separable(channels: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(channels, channels, 3, 1, 1, groups=channels, bias=False), nn.BatchNorm2d(channels), nn.ReLU(),
        nn.Conv2d(channels, channels, 1, bias=False), nn.BatchNorm2d(channels), nn.ReLU(),
    )


class DSCNN(nn.Module):
    def __init__(self, classes: int = 12, channels: int = 64, blocks: int = 4) -> None:
        super().__init__()
        # TF "same" for a 10x4 kernel, stride 2 on 49x10: 9 rows of padding (4 top, 5 bottom), 2 columns.
        self.pad = nn.ZeroPad2d((1, 1, 4, 5))
        self.stem = nn.Sequential(nn.Conv2d(1, channels, (10, 4), 2, bias=False), nn.BatchNorm2d(channels), nn.ReLU())
        self.blocks = nn.Sequential(*[_separable(channels) for _ in range(blocks)])
        self.classifier = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(self.stem(self.pad(x)))
        return self.classifier(x.mean(dim=(2, 3)))


def make_ds_cnn() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = DSCNN()
    shape = (1, 1, 49, 10)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
