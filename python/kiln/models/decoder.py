"""A transposed-convolution decoder: 16 latent values -> a 1x1x32x32 image.

Why in the zoo: generative models, autoencoders' decoders and segmentation heads
upsample with ``nn.ConvTranspose2d``, which no other zoo model uses.

A linear layer to 64x4x4, then three 4x4 stride-2 transposed convolutions (64 -> 32
-> 16 -> 1 channels, 4 -> 8 -> 16 -> 32 pixels), the first two with batch norm and
ReLU, the last followed by a sigmoid (pixel intensities in [0, 1]), as in DCGAN.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input, reestimate_batchnorm


def _up(cin: int, cout: int) -> list[nn.Module]:
    return [nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


class ConvTransposeDecoder(nn.Module):
    def __init__(self, latent: int = 16) -> None:
        super().__init__()
        self.project = nn.Linear(latent, 64 * 4 * 4)
        self.upsample = nn.Sequential(*_up(64, 32), *_up(32, 16), nn.ConvTranspose2d(16, 1, 4, 2, 1), nn.Sigmoid())

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.upsample(torch.relu(self.project(z)).view(-1, 64, 4, 4))


def make_conv_transpose_decoder() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = ConvTransposeDecoder()
    shape = (1, 16)
    reestimate_batchnorm(model, shape)
    return model, (example_input(shape),)
