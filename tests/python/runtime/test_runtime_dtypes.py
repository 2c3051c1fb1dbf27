"""Every .npy dtype the runner reads and writes, through the Python API and kiln-run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import kiln
from kiln.runtime import Runtime


class Add(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class Select(torch.nn.Module):
    """A bool input (the condition) and a bool output (a comparison)."""

    def forward(self, condition: torch.Tensor, x: torch.Tensor, y: torch.Tensor):
        return torch.where(condition, x, y), x > 0.25


def _add_inputs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(3)
    if dtype.is_floating_point:
        return (torch.randn(3, 5, generator=generator, dtype=dtype),
                torch.randn(1, 5, generator=generator, dtype=dtype))
    low = 0 if dtype == torch.uint8 else -50
    return (torch.randint(low, 50, (3, 5), generator=generator, dtype=dtype),
            torch.randint(low, 50, (1, 5), generator=generator, dtype=dtype))


def _select_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(4, 6, generator=generator)
    y = torch.randn(4, 6, generator=generator)
    return x > y, x, y


CASES = {
    **{f"add_{str(d).removeprefix('torch.')}": (Add, lambda d=d: _add_inputs(d))
       for d in (torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
                 torch.int64, torch.uint8)},
    "select_bool": (Select, _select_inputs),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory):
    directory = tmp_path_factory.mktemp("dtype_programs")
    cache: dict[str, tuple[Path, tuple[torch.Tensor, ...], list[torch.Tensor]]] = {}

    def get(case: str):
        if case not in cache:
            model_type, make_inputs = CASES[case]
            model, inputs = model_type().eval(), make_inputs()
            path = directory / f"{case}.pte"
            kiln.export(model, inputs).save(path)
            with torch.no_grad():
                out = model(*inputs)
            cache[case] = (path, inputs, list(out) if isinstance(out, tuple) else [out])
        return cache[case]

    return get


@pytest.mark.parametrize("case", list(CASES))
def test_python_api_keeps_dtypes(compiled, case: str) -> None:
    path, inputs, reference = compiled(case)
    outputs = Runtime.get().load_program(path).load_method().execute(list(inputs))
    for got, want in zip(outputs, reference, strict=True):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", list(CASES))
def test_kiln_run_reads_and_writes_npy_dtypes(kiln_run, compiled, tmp_path: Path, case: str) -> None:
    path, inputs, reference = compiled(case)
    flags: list[str] = []
    for i, tensor in enumerate(inputs):
        np.save(tmp_path / f"in_{i}.npy", tensor.numpy())
        flags += ["--input", str(tmp_path / f"in_{i}.npy")]
    result = subprocess.run([*kiln_run, str(path), *flags, "--output-dir", str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    for i, want in enumerate(reference):
        got = np.load(tmp_path / f"output_{i}.npy")
        assert got.dtype == want.numpy().dtype and got.shape == tuple(want.shape)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)
