"""Small models of the shapes users bring beyond CNNs, for the partition tests: recurrent
classifiers, 1-D convolutions, attention with a fused qkv projection, squeeze-and-excitation,
a U-Net step, a transposed-convolution decoder, an embedding. Written as users write them
(classes and nn.Sequential)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class GruClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(8, 16, batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sequence, _ = self.gru(x)
        return self.head(sequence[:, -1])


class LstmClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=True)  # two stacked layers
        self.head = nn.Linear(12, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, (hidden, _) = self.lstm(x)
        return self.head(hidden[-1])


class Conv1dTimeSeries(nn.Module):
    # The layers sit in an nn.Sequential inside a module: a quantized nn.Sequential itself
    # (forward argument 'input') does not export yet (KeyError 'input_1', an export bug).
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.Conv1d(3, 8, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(8, 8, 3, stride=2, groups=8), nn.ReLU(), nn.Conv1d(8, 16, 1), nn.AvgPool1d(2),
            nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class Attention(nn.Module):
    """qkv in one projection, split with chunk; softmax; the heads joined again."""

    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        split = lambda t: t.reshape(batch, tokens, self.heads, dim // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(q), split(k), split(v)
        weights = torch.softmax(q @ k.transpose(-2, -1) * (dim // self.heads) ** -0.5, dim=-1)
        return x + self.out((weights @ v).transpose(1, 2).reshape(batch, tokens, dim))


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int = 16) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.reduce = nn.Conv2d(channels, channels // 4, 1)
        self.expand = nn.Conv2d(channels // 4, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.conv(x))
        gate = torch.sigmoid(self.expand(F.relu(self.reduce(y.mean((2, 3), keepdim=True)))))
        return y * gate


class UNetStep(nn.Module):
    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode
        self.down = nn.Conv2d(3, 8, 3, padding=1)
        self.bottom = nn.Conv2d(8, 16, 3, padding=1)
        self.up = nn.Conv2d(24, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skip = F.relu(self.down(x))
        deep = F.relu(self.bottom(F.max_pool2d(skip, 2)))
        return self.up(torch.cat([F.interpolate(deep, scale_factor=2, mode=self.mode), skip], dim=1))


class Decoder(nn.Module):
    def __init__(self, stride: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.ConvTranspose2d(8, 4, 4, stride=stride, padding=1), nn.ReLU(),
                                    nn.ConvTranspose2d(4, 2, 3, stride=1, padding=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class TokenClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(30, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.embedding(ids)))


class Upsampler(nn.Module):
    def __init__(self, factor: int, mode: str) -> None:
        super().__init__()
        self.factor, self.mode = factor, mode
        self.conv = nn.Conv2d(4, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(F.interpolate(x, scale_factor=self.factor, mode=self.mode))
