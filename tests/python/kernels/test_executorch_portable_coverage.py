"""Kiln's portable library covers ExecuTorch's: every operator of ExecuTorch 1.5.1's portable
`functions.yaml` (and its `et_copy_ops.yaml`), read from the wheel in the interop venv, is in
kernels/portable/op_table.yaml, except the ones listed below with the reason. The listing of
what is missing is the failure message."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]

# ExecuTorch portable operators Kiln has no kernel for, and why it cannot have one.
NOT_IN_KILN: dict[str, str] = {
    "aten::view_as_real_copy.out": "takes a complex tensor; the .pte schema has no complex dtypes",
}

_FIND_WHEEL = "import importlib.util; print(importlib.util.find_spec('executorch').submodule_search_locations[0])"


@pytest.fixture(scope="module")
def executorch_portable_operators(executorch_python: Path) -> list[str]:
    """Full names ("aten::add.out") of the operators of ExecuTorch's portable op tables."""
    wheel = Path(subprocess.run([str(executorch_python), "-c", _FIND_WHEEL], check=True, capture_output=True,
                                text=True, timeout=120).stdout.strip())
    names: list[str] = []
    for table in ("functions.yaml", "et_copy_ops.yaml"):
        for entry in yaml.safe_load((wheel / "kernels" / "portable" / table).read_text(encoding="utf-8")):
            name = entry.get("op") or entry["func"].split("(", 1)[0]
            names.append(name if "::" in name else f"aten::{name}")
    assert len(names) > 200, f"read only {len(names)} operators from {wheel}: has the table's format changed?"
    return names


def _kiln_operators() -> set[str]:
    table = yaml.safe_load((REPO / "kernels" / "portable" / "op_table.yaml").read_text(encoding="utf-8"))
    return {entry["op"] for entry in table}


def test_every_executorch_portable_operator_has_a_kiln_kernel(executorch_portable_operators: list[str]) -> None:
    missing = sorted(set(executorch_portable_operators) - _kiln_operators() - set(NOT_IN_KILN))
    assert missing == [], f"{len(missing)} ExecuTorch portable operator(s) without a Kiln kernel: {missing}"


def test_the_exceptions_are_still_executorch_operators(executorch_portable_operators: list[str]) -> None:
    stale = sorted(set(NOT_IN_KILN) - set(executorch_portable_operators))
    assert stale == [], f"NOT_IN_KILN lists operators ExecuTorch's portable library no longer has: {stale}"
    implemented = sorted(set(NOT_IN_KILN) & _kiln_operators())
    assert implemented == [], f"NOT_IN_KILN lists operators Kiln now has: {implemented}"
