"""A transformer encoder layer built on ``nn.MultiheadAttention``, 1x32x64 tokens.

Why in the zoo: ``nn.MultiheadAttention`` is how many models (and torch's own transformer
layers) write attention: a packed ``in_proj`` for q, k and v, sequence-first tensors
inside, and ``scaled_dot_product_attention`` (``need_weights=False``) or an explicit
softmax whose weights it can return (``need_weights=True``).

Pre-norm: LayerNorm, 4-head self-attention, residual; LayerNorm, ReLU MLP of 2x the
width, residual.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input


class MultiheadEncoderLayer(nn.Module):
    def __init__(self, dim: int = 64, heads: int = 4, need_weights: bool = False) -> None:
        super().__init__()
        self.need_weights = need_weights
        self.norm1 = nn.LayerNorm(dim)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm1(x)
        x = x + self.attention(y, y, y, need_weights=self.need_weights)[0]
        return x + self.mlp(self.norm2(x))


def make_mha_encoder(need_weights: bool = False) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return MultiheadEncoderLayer(need_weights=need_weights), (example_input((1, 32, 64)),)
