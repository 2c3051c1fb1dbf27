"""A GPT-style decoder block with causal self-attention, 1x32x128 tokens.

Why in the zoo: language and sequence models on the Ethos-U85 mask attention so that no
token sees a later one. Models write that mask three ways, all here (``mask``):
``F.scaled_dot_product_attention(..., is_causal=True)`` (``"is_causal"``), the same with
an explicit boolean ``attn_mask`` from a lower-triangular buffer (``"attn_mask"``), and
that buffer applied with ``masked_fill(mask == 0, float("-inf"))`` before an explicit
softmax (``"masked_fill"``, as nanoGPT does without flash attention).

Pre-norm: LayerNorm, causal attention (one qkv linear split into q, k and v, 4 heads),
projection, residual; LayerNorm, GELU MLP of 4x the width, residual.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from kiln.models.calibration import example_input

#: How the causal mask is written (see the module's docstring).
MASKS = ("is_causal", "attn_mask", "masked_fill")


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, tokens: int, mask: str = "is_causal") -> None:
        super().__init__()
        if mask not in MASKS:
            raise ValueError(f"mask must be one of {MASKS}, not {mask!r}")
        self.heads = heads
        self.mask = mask
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.register_buffer("bias", torch.tril(torch.ones(tokens, tokens)).view(1, 1, tokens, tokens))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        q, k, v = self.c_attn(x).split(dim, dim=2)
        q, k, v = (t.view(batch, tokens, self.heads, dim // self.heads).transpose(1, 2) for t in (q, k, v))
        if self.mask == "masked_fill":
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            scores = scores.masked_fill(self.bias[:, :, :tokens, :tokens] == 0, float("-inf"))
            y = F.softmax(scores, dim=-1) @ v
        elif self.mask == "attn_mask":
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.bias[:, :, :tokens, :tokens] != 0)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(batch, tokens, dim))


class CausalDecoderBlock(nn.Module):
    def __init__(self, dim: int = 128, heads: int = 4, tokens: int = 32, mask: str = "is_causal") -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, tokens, mask)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


def make_causal_decoder(mask: str = "is_causal") -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return CausalDecoderBlock(mask=mask), (example_input((1, 32, 128)),)
