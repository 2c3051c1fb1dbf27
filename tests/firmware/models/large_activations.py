"""A model whose activations (3 x 4 MiB) cannot all live in the Corstone-300's 4 MiB SRAM:
the firmware build must refuse it when the manifest places them there."""

import torch


class LargeActivations(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y

    def get_example_inputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        generator = torch.Generator().manual_seed(0)
        return (torch.randn(1, 4, 512, 512, generator=generator),
                torch.randn(1, 4, 512, 512, generator=generator))
