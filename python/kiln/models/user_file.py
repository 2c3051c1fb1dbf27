"""Loads a user's model given as ``path/to/file.py:ClassName``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

from kiln import KilnError


class ModelFileError(KilnError, ValueError):
    """The ``file.py:ClassName`` spec cannot be loaded; the message says why."""


def load_model_from_file(spec: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """Imports ``file.py``, builds ``ClassName()`` and calls its ``get_example_inputs()``."""
    path_text, _, class_name = spec.rpartition(":")
    path = Path(path_text)
    if not path_text or not class_name:
        raise ModelFileError(f"{spec!r}: expected path/to/file.py:ClassName")
    if not path.is_file():
        raise ModelFileError(f"{spec!r}: no file {path}")
    module_name = f"kiln_user_model_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise ModelFileError(f"{spec!r}: {path} is not a Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    module_spec.loader.exec_module(module)
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ModelFileError(f"{spec!r}: {path} defines no {class_name}")
    model = cls()
    if not hasattr(model, "get_example_inputs"):
        raise ModelFileError(f"{spec!r}: {class_name} has no get_example_inputs() method")
    inputs = model.get_example_inputs()
    return model.eval(), tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
