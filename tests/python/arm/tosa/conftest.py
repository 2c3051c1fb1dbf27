"""Fixtures for the TOSA lowering tests: the q/dq test cases, lowered once per session."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest


@pytest.fixture(scope="session")
def u55_spec() -> Any:
    from kiln.backends.arm import EthosUCompileSpec

    return EthosUCompileSpec("ethos-u55-128")


@pytest.fixture(scope="session")
def lowered_case(qdq: ModuleType) -> Any:
    """``lowered_case(name) -> (case, int8 inputs, graph module, TosaSubgraph)``, cached; lowered
    for ethos-u55-128, or ethos-u85-256 for the U85-only cases."""
    from kiln.backends.arm import EthosUCompileSpec
    from kiln.backends.arm.tosa import lower_to_tosa

    cache: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in cache:
            case, floats = qdq.CASES[name]()
            ints = case.calibrate(*floats)
            graph = qdq.export_graph(case, ints)
            spec = EthosUCompileSpec(qdq.lowering_target(name))
            cache[name] = (case, ints, graph, lower_to_tosa(graph, spec, name=name))
        return cache[name]

    return get
