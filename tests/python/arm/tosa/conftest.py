"""Fixtures for the TOSA lowering tests: the q/dq test cases, lowered once per session."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

_CASES_FILE = Path(__file__).with_name("qdq_cases.py")
_MODULE_NAME = "kiln_test_arm_qdq_cases"


def load_cases() -> ModuleType:
    """qdq_cases.py as a module (no test package: see COMMON.md's importlib rule)."""
    if _MODULE_NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(_MODULE_NAME, _CASES_FILE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[_MODULE_NAME] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[_MODULE_NAME]


@pytest.fixture(scope="session")
def qdq() -> ModuleType:
    return load_cases()


@pytest.fixture(scope="session")
def u55_spec() -> Any:
    from kiln.backends.arm import EthosUCompileSpec

    return EthosUCompileSpec("ethos-u55-128")


@pytest.fixture(scope="session")
def lowered_case(qdq: ModuleType, u55_spec: Any) -> Any:
    """``lowered_case(name) -> (case, int8 inputs, graph module, TosaSubgraph)``, cached."""
    from kiln.backends.arm.tosa import lower_to_tosa

    cache: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in cache:
            case, floats = qdq.CASES[name]()
            ints = case.calibrate(*floats)
            graph = qdq.export_graph(case, ints)
            cache[name] = (case, ints, graph, lower_to_tosa(graph, u55_spec, name=name))
        return cache[name]

    return get
