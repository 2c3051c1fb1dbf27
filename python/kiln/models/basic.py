"""Tiny models: single operators and a perceptron.

Why in the zoo: single operators and a perceptron, the first things to debug with.
"""

from __future__ import annotations

import torch

from kiln.models.calibration import example_input


class Add(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class Softmax(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


class MLP(torch.nn.Module):
    def __init__(self, features: int = 64, hidden: int = 32, classes: int = 10) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(features, hidden)
        self.fc2 = torch.nn.Linear(hidden, hidden)
        self.fc3 = torch.nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


def make_add() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return Add(), (example_input((1, 3, 8, 8), seed=1), example_input((1, 3, 8, 8), seed=2))


def make_softmax() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return Softmax(), (example_input((2, 16), seed=1) * 3.0,)


def make_mlp() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return MLP(), (example_input((1, 64)),)
