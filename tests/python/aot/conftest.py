"""Small models for the AOT compiler tests, defined here so the tests do not depend
on kiln.models. Models with BatchNorm get realistic running statistics (estimated
from random batches) so that their outputs are O(0.1-10), not ~0."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import nn

Example = tuple[nn.Module, tuple[torch.Tensor, ...]]


class AddModel(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class SoftmaxModel(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def conv_bn_relu(cin: int, cout: int) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]


class SmallCNN(nn.Module):
    """conv-bn-relu-maxpool x2, mean over H and W, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(*conv_bn_relu(3, 8), *conv_bn_relu(8, 16))
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x).mean(dim=(2, 3)))


class MobileNetV2Block(nn.Module):
    """Stem, one inverted residual block (expand, depthwise, project, residual add),
    pooling, view, dropout and classifier: the operators of MobileNetV2."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
        self.block = nn.Sequential(
            nn.Conv2d(16, 64, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU6(),
            nn.Conv2d(64, 64, 3, 1, 1, groups=64, bias=False), nn.BatchNorm2d(64), nn.ReLU6(),
            nn.Conv2d(64, 16, 1, bias=False), nn.BatchNorm2d(16),
        )  # fmt: skip
        self.dropout = nn.Dropout(0.2)
        self.classifier = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.stem(x)
        y = y + self.block(y)
        y = y.mean([2, 3])
        y = y.view(y.size(0), -1)
        return self.classifier(self.dropout(y))


def with_realistic_statistics(model: nn.Module, input_shape: tuple[int, ...], seed: int) -> nn.Module:
    generator = torch.Generator().manual_seed(seed)
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(*input_shape, generator=generator))
    return model.eval()


def make_add() -> Example:
    g = torch.Generator().manual_seed(1)
    return AddModel().eval(), (torch.randn(2, 3, generator=g), torch.randn(2, 3, generator=g))


def make_softmax() -> Example:
    g = torch.Generator().manual_seed(2)
    return SoftmaxModel().eval(), (torch.randn(4, 10, generator=g) * 3,)


def make_small_cnn() -> Example:
    torch.manual_seed(3)
    model = with_realistic_statistics(SmallCNN(), (8, 3, 16, 16), seed=3)
    return model, (torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(30)),)


def make_mv2_block() -> Example:
    torch.manual_seed(4)
    model = with_realistic_statistics(MobileNetV2Block(), (8, 3, 32, 32), seed=4)
    return model, (torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(40)),)


MODELS: dict[str, Callable[[], Example]] = {
    "add": make_add,
    "softmax": make_softmax,
    "small_cnn": make_small_cnn,
    "mv2_block": make_mv2_block,
}


@pytest.fixture(params=sorted(MODELS))
def example(request: pytest.FixtureRequest) -> tuple[str, nn.Module, tuple[torch.Tensor, ...]]:
    """(name, model, inputs) for each test model."""
    model, inputs = MODELS[request.param]()
    return request.param, model, inputs


@pytest.fixture
def small_cnn() -> Example:
    return make_small_cnn()


@pytest.fixture
def mv2_block() -> Example:
    return make_mv2_block()
