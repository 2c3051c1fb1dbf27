"""A small vision transformer (Dosovitskiy et al., 2021) on 1x3x32x32 images.

Why in the zoo: attention-based image classifiers are reaching microcontrollers (with
Ethos-U85); they need patch embedding, learned position embeddings, layer norm,
batched matmul and softmax.

4x4 patches (a stride-4 convolution) give 64 tokens of 64 features, plus a learned
position embedding; two pre-norm transformer blocks (4 heads, GELU MLP of 128); a
final layer norm, the mean over tokens and a linear layer to 10 classes.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input
from kiln.models.transformer import TransformerBlock


class VisionTransformer(nn.Module):
    def __init__(self, patch: int = 4, dim: int = 64, depth: int = 2, classes: int = 10, size: int = 32) -> None:
        super().__init__()
        self.embed = nn.Conv2d(3, dim, patch, patch)
        self.position = nn.Parameter(0.02 * torch.randn(1, (size // patch) ** 2, dim))
        self.blocks = nn.Sequential(*[TransformerBlock(dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.classifier = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = self.embed(x).flatten(2).transpose(1, 2) + self.position
        return self.classifier(self.norm(self.blocks(tokens)).mean(dim=1))


def make_vit() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return VisionTransformer(), (example_input((1, 3, 32, 32)),)
