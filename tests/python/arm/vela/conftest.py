"""Fixtures for the Vela and payload tests (they reuse the TOSA tests' q/dq cases)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

_CASES_FILE = Path(__file__).parent.parent / "tosa" / "qdq_cases.py"
_MODULE_NAME = "kiln_test_arm_qdq_cases"

TARGETS = ("ethos-u55-128", "ethos-u65-256", "ethos-u85-256")


def _load_cases() -> ModuleType:
    if _MODULE_NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(_MODULE_NAME, _CASES_FILE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[_MODULE_NAME] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[_MODULE_NAME]


@pytest.fixture(scope="session")
def qdq() -> ModuleType:
    return _load_cases()


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
