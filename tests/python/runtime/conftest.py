"""Programs for the runtime tests, compiled once per session with kiln.export, and
ExecuTorch 1.5.1 as the peer of the interop tests (executorch_peer.py in its venv)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import pytest
import torch

import kiln
import kiln.models
from kiln.runtime import Runtime


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


PEER_SCRIPT = Path(__file__).with_name("executorch_peer.py")


@dataclass(frozen=True)
class Call:
    """One call of a method: its name and its inputs (tensors and Python numbers)."""

    method: str
    inputs: tuple[Any, ...]


# ---- models of the runtime-parity tests (several methods, dynamic shapes, state) ----


class GRUStep(torch.nn.Module):
    """One step of a GRU whose hidden state is a buffer: a streaming model called once
    per input frame. The gates are separate layers taken from an nn.GRUCell, so the
    cell itself is the eager reference; ``h + z * (h_prev - n)`` is the cell's
    ``(1 - z) * n + z * h_prev``."""

    def __init__(self, cell: torch.nn.GRUCell) -> None:
        super().__init__()
        size = cell.hidden_size
        self.gates = torch.nn.ModuleList()
        for weight, bias in ((cell.weight_ih, cell.bias_ih), (cell.weight_hh, cell.bias_hh)):
            for k in range(3):
                layer = torch.nn.Linear(weight.shape[1], size)
                layer.weight.data.copy_(weight.detach()[k * size : (k + 1) * size])
                layer.bias.data.copy_(bias.detach()[k * size : (k + 1) * size])
                self.gates.append(layer)
        self.register_buffer("hidden", torch.zeros(1, size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ir, iz, i_n, hr, hz, h_n = self.gates
        h = self.hidden
        r = torch.sigmoid(ir(x) + hr(h))
        z = torch.sigmoid(iz(x) + hz(h))
        n = torch.tanh(i_n(x) + r * h_n(h))
        new = n + z * (h - n)
        self.hidden.copy_(new)
        return new


def make_gru_step(seed: int = 11) -> tuple[GRUStep, torch.nn.GRUCell]:
    """(the streaming model, its nn.GRUCell) with the same weights."""
    torch.manual_seed(seed)
    cell = torch.nn.GRUCell(5, 8).eval()
    return GRUStep(cell).eval(), cell


class RunningMean(torch.nn.Module):
    """Two buffers, float and int64: the mean of every frame seen so far."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.full((4,), 0.5))
        self.register_buffer("count", torch.ones(1, dtype=torch.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.total.add_(x)
        self.count.add_(1)
        return self.total / self.count


class AccumulatingDoubler(torch.nn.Module):
    """A buffer that adds up every input, returned doubled: the value the state starts
    from shows in every output."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.full((3,), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.total.add_(x)
        return self.total * 2.0


def accumulating_doubler_calls() -> list[Call]:
    return [Call("forward", (torch.tensor([1.0, 2.0, 3.0]),)), Call("forward", (torch.full((3,), 0.5),))]


# Bytes the planned memory holds before a method loads, standing for what a device's
# memory holds after a reset: 0x41414141 is 12.06 as a float32, 0xffffffff a NaN.
STALE_BYTES = (0x00, 0x41, 0xFF)


def run_in_stale_memory(program: Path | bytes, calls: Sequence[Call], stale: int) -> list[list[Any]]:
    """Outputs of ``calls`` in order on ``program`` (each method loaded once, keeping its
    state from call to call), every planned buffer filled with ``stale`` before its
    method loads."""
    loaded = Runtime.get().load_program(program)
    methods: dict[str, Any] = {}
    results = []
    for call in calls:
        if call.method not in methods:
            methods[call.method] = loaded.load_method(call.method, fill_planned=stale)
        results.append(methods[call.method].execute(list(call.inputs)))
    return results


class Delay(torch.nn.Module):
    """A one-frame delay line: returns the previous frame (the buffer before the update)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("previous", torch.full((3,), -1.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.previous.clone()
        self.previous.copy_(x)
        return out


class Encoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.project = torch.nn.Linear(6, 4)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        return self.project(torch.relu(self.conv(image)).mean(dim=(2, 3)))


class Decoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.expand = torch.nn.Linear(4, 10)

    def forward(self, code: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.expand(code), dim=-1)


class DynamicHead(torch.nn.Module):
    """A batch of images (dynamic batch) and a sequence (dynamic batch and length):
    convolution, pooling, a view whose size is read at run time, concatenation."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 6, 5)

    def forward(self, images: torch.Tensor, sequence: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.conv(images).mean(-1)
        logits = self.fc(features.reshape(features.shape[0], -1)).softmax(-1)
        doubled = torch.cat([sequence, torch.relu(sequence)], dim=1)
        return logits, doubled.flatten()


DYNAMIC_BATCH_MAX, DYNAMIC_LENGTH_MAX = 8, 12


def dynamic_head_shapes() -> dict[str, dict[int, torch.export.Dim]]:
    batch = torch.export.Dim("batch", max=DYNAMIC_BATCH_MAX)
    length = torch.export.Dim("length", min=2, max=DYNAMIC_LENGTH_MAX)
    return {"images": {0: batch}, "sequence": {0: batch, 1: length}}


def dynamic_head_inputs(batch: int, length: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(batch, 3, 6, 6, generator=generator), torch.randn(batch, length, generator=generator)


class ScaledWindow(torch.nn.Module):
    """Non-tensor inputs: an int, a float and a bool (torch.export fixes them)."""

    def forward(self, x: torch.Tensor, start: int, scale: float, negate: bool) -> torch.Tensor:
        y = x[:, start:] * scale
        return -y if negate else y


def eager_calls(modules: dict[str, torch.nn.Module], calls: Sequence[Call]) -> list[list[Any]]:
    """Eager PyTorch's outputs of ``calls``, in order, on ``modules`` (which keep their
    buffers' updates from call to call, as a program's methods keep their state)."""
    results = []
    with torch.no_grad():
        for call in calls:
            out = modules[call.method](*call.inputs)
            results.append(list(out) if isinstance(out, (tuple, list)) else [out])
    return results


def assert_close(got: Any, want: Any, what: str) -> None:
    """Numbers equal; tensors of the same dtype and shape within 1e-5 of eager (relative
    to max(1, max |eager|)), integers exactly."""
    if not isinstance(want, torch.Tensor):
        assert got == want, f"{what}: {got} != {want}"
        return
    got = torch.as_tensor(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (
        f"{what}: {got.dtype}{list(got.shape)} vs eager {want.dtype}{list(want.shape)}"
    )
    if not want.dtype.is_floating_point:
        assert torch.equal(got, want), f"{what}: {got} vs eager {want}"
        return
    error = float((got.double() - want.double()).abs().max()) if want.numel() else 0.0
    assert error <= 1e-5 * max(1.0, float(want.abs().max()) if want.numel() else 1.0), f"{what}: max error {error}"


class ExecuTorchBatch:
    """Work for ExecuTorch 1.5.1 (in its own venv), done in one subprocess because
    importing ExecuTorch dominates: exports of saved torch.export programs into .pte
    files, then sequences of method calls, each on one loaded program."""

    def __init__(self, python: Path, work: Path) -> None:
        self._python = python
        self._work = work
        self._exports: list[dict[str, Any]] = []
        self._runs: list[dict[str, Any]] = []

    def add_export(
        self, name: str, methods: dict[str, torch.export.ExportedProgram], *, initial_values: bool = True
    ) -> Path:
        """Where ExecuTorch's .pte of ``methods`` will be after :meth:`execute`; without
        ``initial_values`` the program stores no initial value for its state."""
        directory = self._work / "exports" / name
        directory.mkdir(parents=True)
        saved = {}
        for method, program in methods.items():
            saved[method] = str(directory / f"{method}.pt2")
            torch.export.save(program, saved[method])
        out = directory / "executorch.pte"
        self._exports.append({"methods": saved, "out": str(out), "initial_values": initial_values})
        return out

    def add_run(self, name: str, program: Path, calls: Sequence[Call]) -> Path:
        """Queues ``calls`` on ``program``; :meth:`results` reads them after execute."""
        directory = self._work / "runs" / name
        directory.mkdir(parents=True)
        described = []
        for k, call in enumerate(calls):
            inputs: list[dict[str, Any]] = []
            for i, value in enumerate(call.inputs):
                if isinstance(value, torch.Tensor):
                    path = directory / f"call{k}_input{i}.npy"
                    np.save(path, value.numpy())
                    inputs.append({"npy": str(path)})
                else:
                    kind = "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "float"
                    inputs.append({kind: value})
            described.append({"method": call.method, "inputs": inputs})
        self._runs.append({"program": str(program), "calls": described, "out_dir": str(directory / "out")})
        return directory / "out"

    def execute(self) -> None:
        spec = self._work / "batch.json"
        spec.write_text(json.dumps({"exports": self._exports, "runs": self._runs}))
        result = subprocess.run(
            [str(self._python), str(PEER_SCRIPT), str(spec)], capture_output=True, text=True, timeout=1200
        )
        assert result.returncode == 0, f"ExecuTorch failed:\n{result.stderr[-4000:]}"

    @staticmethod
    def results(out_dir: Path) -> list[Any]:
        """Per call: its outputs (tensors as torch tensors, numbers as Python numbers),
        or the text of the error ExecuTorch raised."""
        results = json.loads((out_dir / "results.json").read_text())
        return [
            result["error"] if "error" in result else [
                torch.from_numpy(np.load(o["npy"])) if "npy" in o else o["number"] for o in result["outputs"]
            ]
            for result in results
        ]  # fmt: skip
