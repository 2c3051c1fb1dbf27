"""Fixtures shared by the Arm backend tests: the q/dq test cases (tosa/qdq_cases.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

_CASES_FILE = Path(__file__).parent / "tosa" / "qdq_cases.py"
_MODULE_NAME = "kiln_test_arm_qdq_cases"


@pytest.fixture(scope="session")
def qdq() -> ModuleType:
    """qdq_cases.py as a module (there is no test package: pytest runs in importlib mode)."""
    if _MODULE_NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(_MODULE_NAME, _CASES_FILE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[_MODULE_NAME] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[_MODULE_NAME]
