"""Fixtures for the Vela and payload tests (they reuse the TOSA tests' q/dq cases)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

TARGETS = ("ethos-u55-128", "ethos-u65-256", "ethos-u85-256")


@pytest.fixture(scope="session")
def specs() -> dict[str, Any]:
    from kiln.backends.arm import EthosUCompileSpec

    return {target: EthosUCompileSpec(target) for target in TARGETS}


@pytest.fixture(scope="session")
def tosa_of(qdq: ModuleType, specs: dict[str, Any]) -> Any:
    """``tosa_of(case name) -> TosaSubgraph`` (lowered once per session)."""
    from kiln.backends.arm.tosa import lower_to_tosa

    cache: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in cache:
            case, floats = qdq.CASES[name]()
            ints = case.calibrate(*floats)
            cache[name] = lower_to_tosa(qdq.export_graph(case, ints), specs["ethos-u85-256"], name=name)
        return cache[name]

    return get
