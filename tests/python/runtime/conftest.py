"""Programs for the runtime tests, compiled once per session with kiln.export."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import kiln
import kiln.models


class ElementwiseChain(torch.nn.Module):
    """Several elementwise kernels (and broadcasting) in one method."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(torch.relu(x + y) * x) - y


def make_elementwise_chain() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    generator = torch.Generator().manual_seed(7)
    x = torch.randn(2, 4, 8, generator=generator)
    y = torch.randn(1, 4, 8, generator=generator)
    return ElementwiseChain(), (x, y)


MODEL_FACTORIES: dict[str, Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]] = {
    "add": lambda: kiln.models.get("add"),
    "softmax": lambda: kiln.models.get("softmax"),
    "elementwise": make_elementwise_chain,
}


@dataclass(frozen=True)
class ExportedModel:
    name: str
    model: torch.nn.Module
    inputs: tuple[torch.Tensor, ...]
    path: Path

    def eager(self, *inputs: torch.Tensor) -> list[torch.Tensor]:
        """Eager PyTorch outputs (the reference), on the example inputs by default."""
        with torch.no_grad():
            out = self.model(*(inputs or self.inputs))
        return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], ExportedModel]:
    """exported(name) -> the model compiled to a .pte (cached per session)."""
    cache: dict[str, ExportedModel] = {}
    directory = tmp_path_factory.mktemp("programs")

    def get(name: str) -> ExportedModel:
        if name not in cache:
            model, inputs = MODEL_FACTORIES[name]()
            model = model.eval()
            path = directory / f"{name}.pte"
            kiln.export(model, inputs).save(path)
            cache[name] = ExportedModel(name, model, tuple(inputs), path)
        return cache[name]

    return get


@pytest.fixture(scope="session")
def kiln_run() -> list[str]:
    """The command of the installed `kiln-run` console script."""
    script = Path(sys.executable).with_name("kiln-run")
    if not script.exists():
        pytest.skip(f"kiln-run is not installed next to {sys.executable}: pip install the package")
    return [str(script)]
