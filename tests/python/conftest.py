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
