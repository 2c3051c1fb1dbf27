"""A DeiT-tiny-sized vision transformer (Touvron et al., 2021), written the way timm writes
it, and its attention block on its own.

Why in the zoo: this is how public model code writes attention - one ``qkv`` linear
layer, ``unbind`` into q, k and v, ``F.scaled_dot_product_attention``, a projection -
rather than the matmul/softmax spelled out op by op in ``transformer.py``; transformers
like this are what the Ethos-U85 was made for.

DeiT-tiny: 16x16 patches (a stride-16 convolution), 192 features, 3 heads, 12 pre-norm
blocks with a GELU MLP of 768, a class token and learned position embeddings, a final
LayerNorm and a linear head on the class token. 224x224 inputs give 197 tokens.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from kiln.models.calibration import example_input


class Attention(nn.Module):
    """Multi-head self-attention as timm writes it."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        qkv = self.qkv(x).reshape(batch, tokens, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)
        return self.proj(x.transpose(1, 2).reshape(batch, tokens, dim))


class Block(nn.Module):
    """Pre-norm transformer block: attention and a GELU MLP, each with a residual."""

    def __init__(self, dim: int, heads: int, mlp_ratio: int = 4) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_ratio * dim), nn.GELU(), nn.Linear(mlp_ratio * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class AttentionBlock(nn.Module):
    """LayerNorm, attention, residual: the attention half of a block."""

    def __init__(self, dim: int = 192, heads: int = 3) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.attn(self.norm(x))


class VisionTransformer(nn.Module):
    def __init__(self, size: int = 224, patch: int = 16, dim: int = 192, depth: int = 12, heads: int = 3,
                 classes: int = 1000) -> None:
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, dim))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, (size // patch) ** 2 + 1, dim))
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def make_deit_tiny(size: int = 224) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return VisionTransformer(size=size), (example_input((1, 3, size, size)),)


def make_attention_block(tokens: int = 50) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """DeiT-tiny's attention at 112x112 (49 patches and the class token)."""
    torch.manual_seed(0)
    return AttentionBlock(), (example_input((1, tokens, 192)),)
