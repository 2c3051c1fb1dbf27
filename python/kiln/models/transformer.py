"""A small pre-norm transformer encoder block (for Ethos-U85), 1x16x64 tokens.

Why in the zoo: the building block of every transformer, with attention written out op by op.

LayerNorm, multi-head self-attention written out op by op (q/k/v projections,
reshape to 4 heads, scaled q @ k^T, softmax, @ v, output projection), residual add,
LayerNorm, MLP 64-128-64 with GELU, residual add. The explicit form (rather than
``nn.MultiheadAttention`` / ``scaled_dot_product_attention``) exports to plain
matmul/softmax/reshape ops that a quantizer and an NPU partitioner can see.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from kiln.models.calibration import example_input


class SelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, _ = x.shape
        return x.reshape(batch, tokens, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        q, k, v = self._split(self.q(x)), self._split(self.k(x)), self._split(self.v(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        attention = torch.softmax(scores, dim=-1)
        context = torch.matmul(attention, v).transpose(1, 2).reshape(batch, tokens, dim)
        return self.out(context)


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 64, heads: int = 4, hidden: int = 128) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = SelfAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def make_transformer() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = TransformerBlock()
    return model, (example_input((1, 16, 64)),)
