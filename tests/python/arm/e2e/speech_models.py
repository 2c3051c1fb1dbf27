"""Speech models written the way public model code writes them, for the Ethos-U tests.

* :class:`Wav2LetterHead`: 1-D convolutions over audio features, ReLU, log_softmax over
  the classes (Wav2Letter's shape, small).
* :class:`Conformer`: torchaudio's Conformer structure (``lengths`` int32 input, a padding
  mask computed from it, ``nn.MultiheadAttention`` with that key-padding mask over a batch
  of utterances, the convolution module with pointwise convolutions, GLU, a depthwise
  1-D convolution, BatchNorm and SiLU, the two half-step feed-forward modules).

Random weights from a seed; BatchNorm statistics settled on inputs of the calibration
distribution (:func:`settle_batch_norms`), so activations are realistic.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


def lengths_to_padding_mask(lengths: torch.Tensor) -> torch.Tensor:
    """True where a frame lies past its utterance's length (torchaudio's helper)."""
    batch_size = lengths.shape[0]
    max_length = int(torch.max(lengths).item())
    frames = torch.arange(max_length, device=lengths.device, dtype=lengths.dtype)
    return frames.expand(batch_size, max_length) >= lengths.unsqueeze(1)


class Wav2LetterHead(nn.Module):
    """Conv1d stack over (batch, features, frames), log-probabilities per class and frame."""

    def __init__(self, features: int = 16, classes: int = 12, channels: int = 32) -> None:
        super().__init__()
        self.acoustic = nn.Sequential(
            nn.Conv1d(features, channels, 11, stride=2, padding=5), nn.ReLU(),
            nn.Conv1d(channels, channels, 7, padding=3), nn.ReLU(),
            nn.Conv1d(channels, channels, 7, padding=3), nn.ReLU(),
            nn.Conv1d(channels, 2 * channels, 9, padding=4), nn.ReLU(),
            nn.Conv1d(2 * channels, 2 * channels, 1), nn.ReLU(),
            nn.Conv1d(2 * channels, classes, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.log_softmax(self.acoustic(x), dim=1)


class FeedForwardModule(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.sequential = nn.Sequential(
            nn.LayerNorm(dim), nn.Linear(dim, hidden), nn.SiLU(), nn.Dropout(0.0), nn.Linear(hidden, dim),
            nn.Dropout(0.0),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sequential(x)


class ConvolutionModule(nn.Module):
    """(batch, frames, dim) -> the same: pointwise conv, GLU, depthwise conv, BatchNorm, SiLU,
    pointwise conv."""

    def __init__(self, dim: int, kernel_size: int) -> None:
        super().__init__()
        self.layer_norm = nn.LayerNorm(dim)
        self.sequential = nn.Sequential(
            nn.Conv1d(dim, 2 * dim, 1, bias=False), nn.GLU(dim=1),
            nn.Conv1d(dim, dim, kernel_size, padding=(kernel_size - 1) // 2, groups=dim, bias=False),
            nn.BatchNorm1d(dim), nn.SiLU(), nn.Conv1d(dim, dim, 1, bias=False), nn.Dropout(0.0),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layer_norm(x).transpose(1, 2)
        return self.sequential(x).transpose(1, 2)


class ConformerLayer(nn.Module):
    def __init__(self, dim: int, heads: int, ffn_dim: int, kernel_size: int) -> None:
        super().__init__()
        self.ffn1 = FeedForwardModule(dim, ffn_dim)
        self.self_attn_layer_norm = nn.LayerNorm(dim)
        self.self_attn = nn.MultiheadAttention(dim, heads, dropout=0.0)
        self.conv_module = ConvolutionModule(dim, kernel_size)
        self.ffn2 = FeedForwardModule(dim, ffn_dim)
        self.final_layer_norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor) -> torch.Tensor:
        # x: (frames, batch, dim), as torchaudio's layers take it.
        x = self.ffn1(x) * 0.5 + x
        residual = x
        x = self.self_attn_layer_norm(x)
        x, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)
        x = x + residual
        x = x + self.conv_module(x.transpose(0, 1)).transpose(0, 1)
        x = self.ffn2(x) * 0.5 + x
        return self.final_layer_norm(x)


class Conformer(nn.Module):
    """forward(features (batch, frames, dim), lengths (batch,) int32) -> (encodings, lengths)."""

    def __init__(self, dim: int = 16, heads: int = 4, ffn_dim: int = 32, layers: int = 2,
                 kernel_size: int = 7) -> None:
        super().__init__()
        self.conformer_layers = nn.ModuleList(
            [ConformerLayer(dim, heads, ffn_dim, kernel_size) for _ in range(layers)])

    def forward(self, features: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mask = lengths_to_padding_mask(lengths)
        x = features.transpose(0, 1)
        for layer in self.conformer_layers:
            x = layer(x, mask)
        return x.transpose(0, 1), lengths


def settle_batch_norms(model: nn.Module, samples: list[tuple[torch.Tensor, ...]]) -> nn.Module:
    """Running statistics from ``samples`` (train-mode passes without gradients), then eval."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            module.momentum = None  # a plain average over the passes
    model.train()
    with torch.no_grad():
        for sample in samples:
            model(*sample)
    return model.eval()


def wav2letter_head(seed: int = 0) -> tuple[nn.Module, tuple[torch.Tensor], list[tuple[torch.Tensor]]]:
    """(model, example inputs, calibration samples): 16 features x 64 frames."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    samples = [(torch.from_numpy(rng.standard_normal((1, 16, 64)).astype(np.float32)),) for _ in range(4)]
    return settle_batch_norms(Wav2LetterHead(), samples), samples[0], samples


def conformer(seed: int = 0) -> tuple[nn.Module, tuple[torch.Tensor, torch.Tensor],
                                      list[tuple[torch.Tensor, torch.Tensor]]]:
    """(model, example inputs, calibration samples): a batch of 10 utterances of up to 24
    frames of 16 features; the longest utterance fills the frames (the mask's width is the
    longest length, as torchaudio computes it)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    frames, batch = 24, 10

    def sample() -> tuple[torch.Tensor, torch.Tensor]:
        lengths = rng.integers(4, frames + 1, size=batch).astype(np.int32)
        lengths[0] = frames
        features = rng.standard_normal((batch, frames, 16)).astype(np.float32)
        return torch.from_numpy(features), torch.from_numpy(lengths)

    samples = [sample() for _ in range(4)]
    return settle_batch_norms(Conformer(), samples), samples[0], samples
