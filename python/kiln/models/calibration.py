"""Gives batch-norm layers realistic running statistics."""

from __future__ import annotations

import torch


def reestimate_batchnorm(model: torch.nn.Module, input_shape: tuple[int, ...],
                         batches: int = 4, batch_size: int = 8, seed: int = 0) -> None:
    """Replaces every BatchNorm's running mean/var by statistics of random N(0, 1) inputs.

    Default statistics (mean 0, var 1) on a randomly initialised deep network shrink the
    activations layer after layer; statistics measured on real activations keep each
    layer's output normalised, as in a trained network.
    """
    bn_layers = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bn_layers:
        return
    generator = torch.Generator().manual_seed(seed)
    saved_momentum = [bn.momentum for bn in bn_layers]
    for bn in bn_layers:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average over all batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn((batch_size, *input_shape[1:]), generator=generator))
    for bn, momentum in zip(bn_layers, saved_momentum):
        bn.momentum = momentum
    model.eval()


def example_input(shape: tuple[int, ...], seed: int = 1) -> torch.Tensor:
    """A deterministic N(0, 1) input of `shape` (same distribution as calibration)."""
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))
