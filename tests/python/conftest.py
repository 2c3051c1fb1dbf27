"""Fixtures shared by all Python test folders (keep this file small)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def executorch_python() -> Path:
    """The ExecuTorch venv's python executable (env KILN_EXECUTORCH_PYTHON); skips if absent."""
    value = os.environ.get("KILN_EXECUTORCH_PYTHON", "")
    if not value or not Path(value).is_file():
        pytest.skip(
            "ExecuTorch venv not available: set KILN_EXECUTORCH_PYTHON to its python "
            "(tools/setup_executorch.sh creates it)"
        )
    return Path(value)


@pytest.fixture(scope="session")
def model_explorer_python() -> Path:
    """The python of the venv with Model Explorer's PTE adapter (env KILN_MODEL_EXPLORER_PYTHON);
    skips if absent. Its own venv: the adapter needs a newer flatbuffers than tosa-tools allows."""
    value = os.environ.get("KILN_MODEL_EXPLORER_PYTHON", "")
    if not value or not Path(value).is_file():
        pytest.skip(
            "Model Explorer venv not available: set KILN_MODEL_EXPLORER_PYTHON to its python "
            "(tools/setup_model_explorer.sh creates it)"
        )
    return Path(value)


KERNEL_TEST_DIR = Path(__file__).parent / "kernels"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups tests for pytest-xdist's `--dist loadgroup` (tools/test.sh): each test file
    runs whole on one worker, so a module-scoped fixture (a model compiled once) is built
    once; the op tests share one group, because test_op_coverage.py checks, after all of
    them, the programs they exported (its log lives in one process)."""
    for item in items:
        in_op_tests = item.path.parent == KERNEL_TEST_DIR and item.path.name.startswith("test_op_")
        item.add_marker(pytest.mark.xdist_group("kernel-op-tests" if in_op_tests else str(item.path)))
